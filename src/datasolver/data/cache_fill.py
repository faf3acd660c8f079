"""Filling the table cache after the answer: a big file a query read straight goes into the cache
in a detached process, so the command that printed the rows exits at once (issue 45, item 3).

`datasolver sql` reads a table DuckDB can scan (a UTF-8 CSV, Parquet) straight from its file, then
caches it (`Catalog.persist`). Loading a 147 MB CSV into the cache costs ~3x the query (the typed,
checked table written to disk); the shell waited for it (13.6 s against DuckDB's ~3 s). Now a file of
`BACKGROUND_BYTES` or more is left to this module: `start_fill` starts `python -m
datasolver.data.cache_fill`, in its own session, with no terminal, stdin, stdout or stderr (a pipe
reading the command's output ends when the command does), which opens a catalog of the same folder
on the same cache and loads those tables (`Catalog.load`, the same code and guarantees as a load in
the foreground: no link followed, atomic entries, a whole entry or none), within `FILL_TIMEOUT_S`.
A smaller file is cached before the command exits (a child's start-up, ~0.5 CPU-s, costs more).

One fill at a time per folder, tables and options: the command takes an exclusive `flock` on a
lock file in the cache root and hands it to the child, which holds it until it ends; a command that
finds it taken starts no second child (a query meanwhile reads the file, as the first did).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from datasolver.data.user_cache import make_dirs, owned_privately
from datasolver.sizes import human_size

BACKGROUND_BYTES = 16 << 20
"""A table read straight from a file this large or larger is cached by a detached child."""
FILL_TIMEOUT_S = 600.0
"""How long the child may load before it stops (what it did not finish is loaded again next time)."""


@dataclass(frozen=True)
class FillJob:
    """What the child needs to open the same catalog: the folder, its derived folders (document
    tables), the `--encoding` and `--header-row`, the cache root, and the tables to load."""

    folder: str
    cache_root: str
    tables: list[str]
    derived: list[str] = field(default_factory=list)
    encoding: str | None = None
    header_row: int | None = None

    def lock_name(self) -> str:
        key = json.dumps([self.folder, sorted(self.tables), self.derived, self.encoding, self.header_row]).encode("utf-8", "surrogateescape")
        return f".fill-{hashlib.sha256(key).hexdigest()[:24]}.lock"


def start_fill(job: FillJob) -> int | None:
    """Start the detached child that loads `job.tables` into the cache; its process id, or None
    when another one already fills them (or the cache root cannot take a lock file)."""
    root = Path(job.cache_root)
    try:
        make_dirs(root)
        if not owned_privately(root):
            return None
        fd = os.open(root / job.lock_name(), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held by a fill still running
            return None
        child = subprocess.Popen(  # never waited for: the command exits, init reaps the child
            [sys.executable, "-m", "datasolver.data.cache_fill", json.dumps(asdict(job))],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, pass_fds=(fd,), cwd="/")
        return child.pid
    except OSError:
        return None
    finally:
        os.close(fd)  # the child's copy keeps the lock


def fill_later(job: FillJob, left: list[tuple[str, str, int]]) -> list[str]:
    """Start the fill of the tables `Catalog.persist` left, (name, source file, bytes) each; the
    note lines that say so."""
    pid = start_fill(job)
    who = f"in the background (pid {pid})" if pid else "by another datasolver process"
    return [f"note: {name} ({source}, {human_size(size)}) goes into the table cache {who}; until then a query "
            "reads the file" for name, source, size in left]


def _fill(job: FillJob) -> None:
    from datasolver.data.catalog import Catalog
    from datasolver.data.table_cache import TableCache

    derived = [Path(d) for d in job.derived if Path(d).is_dir()]
    with Catalog.open(job.folder, extra_derived=derived, encoding=job.encoding, header_row=job.header_row,
                      table_cache=TableCache(Path(job.cache_root))) as catalog:
        names = [n for n in job.tables if n in catalog.names()]
        if names:
            catalog.load(names, timeout_s=FILL_TIMEOUT_S)


def main(argv: list[str]) -> int:
    """`python -m datasolver.data.cache_fill JOB_JSON`: load the job's tables, then exit (the lock
    file's descriptor, inherited, closes with the process)."""
    def unwind(signum: int, frame: object) -> None:  # SIGTERM: the catalog removes its unfinished entry
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, unwind)
    try:
        _fill(FillJob(**json.loads(argv[0])))
    except KeyboardInterrupt:
        return 128 + signal.SIGTERM
    except Exception:  # noqa: BLE001 - nobody reads it: the next command loads the table itself
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
