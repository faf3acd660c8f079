"""Progress display: a rich bar on a terminal, one plain log line per event otherwise.

The batch calls five methods; `make_progress` picks the form. Library callers that want no
output pass `NullProgress()`.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress as RichBar,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from datasolver.pipeline.summary import TaskRecord
from datasolver.terminal import printable


class Progress(Protocol):
    """What the batch reports while it runs."""

    def start(self, total: int, skipped: int) -> None:
        """`total` tasks will run; `skipped` already had a prediction."""

    def task_preparing(self, task_id: str) -> None:
        """A task's prepare stage begins (scratch copy, documents, video): before its model worker."""

    def task_started(self, task_id: str, mode: str) -> None:
        """A task got a model worker, in `mode`."""

    def task_finished(self, record: TaskRecord) -> None:
        """A task ended (any status)."""

    def close(self) -> None:
        """The batch is over."""

    def note(self, text: str) -> None:
        """Something a person should know about the run as a whole (e.g. the model server is slow)."""


class NullProgress:
    """Reports nothing."""

    def note(self, text: str) -> None: ...

    def start(self, total: int, skipped: int) -> None: ...

    def task_preparing(self, task_id: str) -> None: ...

    def task_started(self, task_id: str, mode: str) -> None: ...

    def task_finished(self, record: TaskRecord) -> None: ...

    def close(self) -> None: ...


class _Tally:
    """Counts shared by both displays."""

    def __init__(self) -> None:
        self.total = 0
        self.finished = 0
        self.solved = 0
        self.fallback = 0
        self.failed = 0
        self.tokens = 0

    def add(self, record: TaskRecord) -> None:
        self.finished += 1
        self.tokens += record.tokens
        if record.status == "solved":
            self.solved += 1
        elif record.status == "fallback":
            self.fallback += 1
        else:
            self.failed += 1


class LogProgress:
    """One timestamped line per event, for logs and pipes (no control characters)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream
        self._tally = _Tally()
        self._started = time.monotonic()
        self._begun: set[str] = set()  # tasks whose "start" line is out

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(f"{time.strftime('%H:%M:%S')} {printable(text)}\n")  # reasons quote file names
        stream.flush()

    def note(self, text: str) -> None:
        self._write(text)

    def start(self, total: int, skipped: int) -> None:
        self._tally.total = total
        self._started = time.monotonic()
        extra = f" ({skipped} already have a prediction, skipped)" if skipped else ""
        self._write(f"run: {total} task(s) to solve{extra}")

    def task_preparing(self, task_id: str) -> None:
        self._begun.add(task_id)
        self._write(f"start {task_id}")

    def task_started(self, task_id: str, mode: str) -> None:
        note = "" if mode == "full" else f" [{mode}]"
        if task_id not in self._begun:  # no prepare stage said (Ray: the worker prepares it)
            self._write(f"start {task_id}{note}")
        elif note:
            self._write(f"{task_id}: {mode} mode")

    def task_finished(self, record: TaskRecord) -> None:
        t = self._tally
        t.add(record)
        why = f": {record.reason}" if record.reason and record.status != "solved" else ""
        self._write(
            f"[{t.finished}/{t.total}] {record.task_id} {record.status} in {record.seconds:.1f}s "
            f"(attempts {record.attempts}, requests {record.requests}, tokens {record.tokens}){why} "
            f"| solved {t.solved}, fallback {t.fallback}, failed {t.failed}, tokens {t.tokens}{self._eta()}"
        )

    def _eta(self) -> str:
        t = self._tally
        if not t.finished or t.finished >= t.total:
            return ""
        per_task = (time.monotonic() - self._started) / t.finished
        return f", ETA {per_task * (t.total - t.finished) / 60:.1f} min"

    def close(self) -> None:
        t = self._tally
        self._write(f"done: solved {t.solved}, fallback {t.fallback}, failed {t.failed}, tokens {t.tokens}")


class RichProgress:
    """A live bar: done/total, solved / fallback / failed, tokens, elapsed and ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self._tally = _Tally()
        self._bar = RichBar(
            SpinnerColumn(),
            TextColumn("[bold]datasolver run"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[green]✓ {task.fields[solved]}[/] [yellow]~ {task.fields[fallback]}[/] "
                       "[red]✗ {task.fields[failed]}[/]"),
            TextColumn("{task.fields[tokens]} tok"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._id = None

    def note(self, text: str) -> None:
        self._bar.console.print(printable(text), markup=False)

    def start(self, total: int, skipped: int) -> None:
        self._bar.start()
        if skipped:
            self._bar.console.print(f"{skipped} task(s) already have a prediction: skipped (--force redoes them)")
        self._id = self._bar.add_task("run", total=total, solved=0, fallback=0, failed=0, tokens=0)

    def task_preparing(self, task_id: str) -> None: ...

    def task_started(self, task_id: str, mode: str) -> None:
        if mode != "full":
            self._bar.console.print(printable(f"{task_id}: {mode} mode"), markup=False)

    def task_finished(self, record: TaskRecord) -> None:
        t = self._tally
        t.add(record)
        if record.status != "solved":
            self._bar.console.print(printable(f"{record.task_id}: {record.status} ({record.reason})"), markup=False)
        if self._id is not None:
            self._bar.update(self._id, advance=1, solved=t.solved, fallback=t.fallback, failed=t.failed,
                             tokens=t.tokens)

    def close(self) -> None:
        self._bar.stop()


def make_progress(stream: IO[str] | None = None) -> Progress:
    """A rich bar when `stream` (default stderr) is a terminal, else plain log lines."""
    stream = stream or sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        return RichProgress(Console(file=stream))
    return LogProgress(stream)
