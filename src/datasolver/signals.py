"""SIGTERM unwinds like Ctrl-C, so `finally` blocks and context managers clean up temp folders.

Python's default SIGTERM ends the process at once: no `finally`, no `with` exit, no atexit, so
every temporary folder stays behind. With `terminate_unwinds()` SIGTERM raises `Terminated` (a
KeyboardInterrupt) in the main thread instead; the process still exits (status 143, as for SIGTERM), after its cleanup.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

EXIT_CODE = 128 + signal.SIGTERM  # what a shell reports for a process ended by SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; raised in the main thread so cleanup code runs on the way out."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"signal {signum}")


@contextmanager
def terminate_unwinds() -> Iterator[None]:
    """SIGTERM raises `Terminated` inside the block; the previous handler is restored after it.

    Outside the main thread (where Python cannot set handlers) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
