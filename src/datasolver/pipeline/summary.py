"""Per-task records and the run's summary: rewritten after every task, final at the end.

Rewriting as tasks finish means a run killed at the competition's time limit still leaves an
accurate summary of everything that finished (`"finished": false`). Each run writes its own
`run_summary-<run id>.json` and a copy as `run_summary.json` (the latest); no run writes an earlier
run's file (`datasolver.run_logs` spells the names).
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from datasolver import safe_write, untrusted_json
from datasolver.eval.confidence import LEVELS
from datasolver.llm import Usage, redact_url
from datasolver.run_logs import LATEST_SUMMARY, earlier_run_id, is_run_id, new_run_id, summary_name
from datasolver.solver import STATUSES, TaskStatus


@dataclass
class TaskRecord:
    """What happened to one task. `usage` covers every model request made for it (documents and agent)."""

    task_id: str
    status: TaskStatus
    mode: str = "full"
    """full | fast | fallback_only | resume"""
    attempts: int = 0
    requests: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    reason: str | None = None
    """Why the task is not solved (or why it was skipped); None when solved."""
    error: str | None = None
    """`ExceptionType: message` when something raised inside the worker."""
    prediction: str | None = None
    document_tables: int = 0
    vote: dict[str, Any] | None = None
    """With `--votes N > 1`: every solve (status, signature, failed checks), the votes, the chosen one."""
    confidence: str | None = None
    """high | medium | low for the published answer (the agent's `confidence`), None without one."""

    @property
    def tokens(self) -> int:
        return int(self.usage.get("total_tokens", 0))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        data["tokens"] = self.tokens
        return data


@dataclass
class RunSummary:
    """One batch run: settings, counts, usage totals and every task's record."""

    input_dir: str
    output_dir: str
    logs_dir: str
    model: str
    workers: int
    task_timeout_s: float
    time_budget_s: float | None
    started_at: str = field(default_factory=lambda: _now())
    finished_at: str | None = None
    seconds: float = 0.0
    scratch_dir: str | None = None
    tasks: list[TaskRecord] = field(default_factory=list)
    discovery_errors: list[dict[str, str]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    """The run's model call policy and agent settings (no endpoint URL, no key): replay and report read it."""
    sandbox: dict[str, Any] = field(default_factory=dict)
    """How solver.py runs were started: `fork_server` (on / off / why unusable) and `warm_runs`."""
    run_id: str = field(default_factory=new_run_id)
    """Names this run's summary file and marks its part of each trace (`task_start`)."""
    preflight: dict[str, Any] | None = None
    """What the check of the model endpoint before the first task saw (None: not made)."""

    @property
    def file_name(self) -> str:
        """`run_summary-<run id>.json`: this run's own summary in the logs folder."""
        return summary_name(self.run_id)

    def add(self, record: TaskRecord) -> None:
        self.tasks.append(record)

    def all_failed(self) -> bool:
        """Whether this run ran at least one task and every task it ran failed (a skipped task ran
        nothing: it counts neither way)."""
        ran = [r.status for r in self.tasks if r.status != "skipped"]
        return bool(ran) and all(status == "failed" for status in ran)

    def counts(self) -> dict[str, int]:
        """Tasks per status (every status present, zeros included)."""
        seen = Counter(r.status for r in self.tasks)
        return {status: seen.get(status, 0) for status in STATUSES}

    def confidence_counts(self) -> dict[str, int]:
        """Answers per confidence label, high first (every label present, zeros included; a task without an
        answer has none)."""
        seen = Counter(r.confidence for r in self.tasks)
        return {label: seen.get(label, 0) for label in reversed(LEVELS)}

    def usage(self) -> dict[str, int]:
        """Usage of the tasks run in this run (skipped tasks made no request)."""
        total = Usage()
        for record in self.tasks:
            u = record.usage
            total.add(u.get("prompt_tokens", 0), u.get("completion_tokens", 0),
                      requests=u.get("requests", 0), retries=u.get("retries", 0),
                      failed=u.get("failed", 0), cancelled=u.get("cancelled", 0))
        return total.as_dict()

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "finished": self.finished_at is not None,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "seconds": round(self.seconds, 3),
            "input_dir": self.input_dir,
            "output_dir": self.output_dir,
            "logs_dir": self.logs_dir,
            "scratch_dir": self.scratch_dir,
            "model": self.model,
            "workers": self.workers,
            "task_timeout_s": self.task_timeout_s,
            "time_budget_s": self.time_budget_s,
            "counts": self.counts(),
            "confidence": self.confidence_counts(),
            "usage": self.usage(),
            "discovery_errors": self.discovery_errors,
            "settings": self.settings,
            "sandbox": self.sandbox,
            "preflight": self.preflight,
            "tasks": [r.to_json() for r in sorted(self.tasks, key=lambda r: r.task_id)],
        }

    def finish(self, seconds: float) -> None:
        self.finished_at = _now()
        self.seconds = seconds


def write_summary(summary: RunSummary, path: Path) -> Path:
    """Write `run_summary.json` atomically (a reader never sees half a file); any
    `user:password@` of a URL in an error message is written as `***@`."""
    return safe_write.write_file(Path(path), _summary_text(summary))


def _summary_text(summary: RunSummary) -> str:
    return redact_url(json.dumps(summary.to_json(), ensure_ascii=False, indent=2)) + "\n"


def write_run_summary(summary: RunSummary, logs_dir: Path) -> Path:
    """Write the run's own `run_summary-<run id>.json`, then its copy `run_summary.json` (the latest);
    return the run's own file."""
    text = _summary_text(summary)
    own = safe_write.write_file(Path(logs_dir) / summary.file_name, text)
    safe_write.write_file(Path(logs_dir) / LATEST_SUMMARY, text)
    return own


def keep_earlier_summary(logs_dir: Path) -> Path | None:
    """Before a run's first summary: a `run_summary.json` whose run has no file of its own (written
    before runs had ids, or its own file was deleted) is copied to one, so the new run's copy never
    replaces the only summary of an earlier run. Returns the copy, or None when there was nothing
    to keep. A link or a non-regular file there is left alone (never followed; replaced later)."""
    latest = Path(logs_dir) / LATEST_SUMMARY
    try:
        info = os.lstat(latest)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        with untrusted_json.open_regular(latest) as fh:
            data = fh.read(untrusted_json.MAX_FILE_BYTES + 1)
    except (OSError, untrusted_json.BadJSON):
        return None
    if len(data) > untrusted_json.MAX_FILE_BYTES:
        return None
    try:
        recorded = untrusted_json.parse_object(data.decode("utf-8-sig", errors="replace"))
    except untrusted_json.BadJSON:
        recorded = {}
    run_id = recorded.get("run_id")
    if not is_run_id(run_id):
        run_id = earlier_run_id(recorded.get("started_at"), info.st_mtime)
    target = Path(logs_dir) / summary_name(run_id)
    if os.path.lexists(target):
        return None
    return safe_write.write_file(target, data)


def load_summary(path: Path) -> dict[str, Any]:
    """A summary as written (plain JSON); BadJSON (a ValueError) when it is not a usable object."""
    return untrusted_json.read_object(Path(path))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
