"""The run summaries of a logs folder: their names, run ids, and which runs a folder holds.

Every run of `datasolver run` into a logs folder gets a run id (its UTC start time to the millisecond
and four random hex digits; a run always sorts after the runs the folder already holds, so names sort by start) and its own summary, `run_summary-<run id>.json`, which no
later run writes. `run_summary.json` is a copy of the latest run's, rewritten with it, for readers
that want "the latest" without choosing. A task's trace marks each run's part with the run id in
its `task_start` event, so a reader can keep one run's part of a trace that several runs appended to.

The pipeline writes these names and `report`/`replay` read them; a logs folder may come from anyone,
so listing it is bounded and a name that does not follow the rule is not a run.
A leaf: it imports only `errors`.
"""

from __future__ import annotations

import os
import re
import secrets
from datetime import datetime, timedelta, timezone
from pathlib import Path

from datasolver.errors import DatasolverError

LATEST_SUMMARY = "run_summary.json"
"""A copy of the latest run's summary."""
_PREFIX, _SUFFIX = "run_summary-", ".json"
_MAX_SUFFIX = 12
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-z]{1,12}")
"""A run id: `20261203T101502Z-4133f9a` (before 2026-12-07 without the milliseconds, `…Z-3f9a`; an
earlier run's summary kept by a newer version: `…Z-earlier`)."""
EARLIER = "earlier"
MAX_LISTED = 10_000
"""At most this many folder entries are looked at when listing runs (a folder may hold anything)."""


class UnknownRun(DatasolverError, LookupError):
    """A run named by its id has no summary in the logs folder (or the name is no run id)."""


def new_run_id(now: datetime | None = None, after: str | None = None) -> str:
    """A fresh run id: the UTC time to the second, `-`, its milliseconds, then four random hex digits.

    `after` is the latest run id already in the logs folder: the new id sorts after it even when
    both runs started in the same millisecond or the clock was set back (then it is `after` with
    one more character, or, at the length limit, the next second's id)."""
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    run_id = f"{moment:%Y%m%dT%H%M%SZ}-{moment.microsecond // 1000:03d}{secrets.token_hex(2)}"
    if after is None or not is_run_id(after) or run_id > after:
        return run_id
    if len(after) - after.index("-") - 1 < _MAX_SUFFIX:
        return after + "0"
    later = datetime.strptime(after[:after.index("-")], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    return f"{later + timedelta(seconds=1):%Y%m%dT%H%M%SZ}-000{secrets.token_hex(2)}"


def is_run_id(value: object) -> bool:
    """Whether `value` is a run id (a string by the rule; nothing else names a file)."""
    return isinstance(value, str) and RUN_ID.fullmatch(value) is not None


def summary_name(run_id: str) -> str:
    """`run_summary-<run id>.json`; ValueError for anything that is not a run id."""
    if not is_run_id(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    return f"{_PREFIX}{run_id}{_SUFFIX}"


def earlier_run_id(started_at: object, mtime: float) -> str:
    """The id under which a summary written before run ids existed is kept: its start time
    (`started_at`, when it is an ISO time), else the file's modification time, then `-earlier`."""
    moment = None
    if isinstance(started_at, str):
        try:
            moment = datetime.fromisoformat(started_at)
        except ValueError:
            moment = None
    if moment is None or moment.tzinfo is None:
        moment = datetime.fromtimestamp(mtime, timezone.utc)
    return f"{moment.astimezone(timezone.utc):%Y%m%dT%H%M%SZ}-{EARLIER}"


def run_ids(logs_dir: Path) -> list[str]:
    """The run ids whose summary file is in `logs_dir`, oldest first (at most MAX_LISTED entries read)."""
    found = []
    try:
        with os.scandir(logs_dir) as entries:
            for number, entry in enumerate(entries):
                if number >= MAX_LISTED:
                    break
                name = entry.name
                if name.startswith(_PREFIX) and name.endswith(_SUFFIX):
                    run_id = name[len(_PREFIX):-len(_SUFFIX)]
                    if is_run_id(run_id):
                        found.append(run_id)
    except OSError:
        return []
    return sorted(found)


def chosen_summary(logs_dir: Path, run_id: str | None = None) -> Path | None:
    """The summary file of run `run_id` in `logs_dir`, or the latest run's when None (the
    `run_summary.json` copy, else the newest `run_summary-<run id>.json`); None when there is none.
    UnknownRun when `run_id` is not a run id or has no summary there (the message lists the runs)."""
    logs_dir = Path(logs_dir)
    if run_id is None:
        if os.path.lexists(logs_dir / LATEST_SUMMARY):
            return logs_dir / LATEST_SUMMARY
        known = run_ids(logs_dir)
        return logs_dir / summary_name(known[-1]) if known else None
    known = run_ids(logs_dir)
    if not is_run_id(run_id) or run_id not in known:
        listed = ", ".join(known[-10:]) + (f" (the last 10 of {len(known)})" if len(known) > 10 else "")
        raise UnknownRun(f"no run {run_id!r} in {logs_dir}; "
                         + (f"its runs: {listed}" if known else f"it holds no {_PREFIX}<run id>{_SUFFIX}"))
    return logs_dir / summary_name(run_id)
