"""How a data command runs catalog work for a person: Ctrl-C and SIGTERM stop it at once, and a
load that takes more than a moment shows a progress line on a terminal's stderr."""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO, TypeVar

from datasolver.data import Catalog
from datasolver.signals import run_stoppable

T = TypeVar("T")
SHOW_AFTER_S = 2.0  # a shorter load shows nothing


class LoadProgress:
    """One line on a terminal, rewritten in place: what the catalog is loading, how far, how long."""

    def __init__(self, catalog: Catalog, stream: TextIO | None = None) -> None:
        self.catalog = catalog
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.shown = False

    def tick(self) -> None:
        if not self.enabled:
            return
        activity = self.catalog.activity()
        if activity is None or time.monotonic() - activity.started < SHOW_AFTER_S:
            self.clear()
            return
        percent = f" {activity.percent:.0f}%" if activity.percent is not None else ""
        elapsed = time.monotonic() - activity.started
        self.stream.write(f"\r\x1b[K{activity.what}…{percent} {elapsed:.0f} s (Ctrl-C stops)")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def run_catalog_work(catalog: Catalog, work: Callable[[], T]) -> T:
    """Run `work` (queries, loads) so that Ctrl-C or SIGTERM interrupt the catalog and end the
    command within about a second, with a progress line for long loads on a terminal."""
    progress = LoadProgress(catalog)
    try:
        return run_stoppable(work, catalog.interrupt, tick=progress.tick)
    finally:
        progress.clear()
