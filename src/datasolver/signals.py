"""SIGTERM unwinds like Ctrl-C, so `finally` blocks and context managers clean up temp folders.

Python's default SIGTERM ends the process at once: no `finally`, no `with` exit, no atexit, so
every temporary folder stays behind. With `terminate_unwinds()` SIGTERM raises `Terminated` (a
KeyboardInterrupt) in the main thread instead; the process still exits (status 143, as for SIGTERM), after its cleanup.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

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


STOP_GRACE_S = 1.0  # after Ctrl-C or SIGTERM, how long stoppable work may take to end


def run_stoppable(work: Callable[[], T], stop: Callable[[], object], grace_s: float = STOP_GRACE_S,
                  tick: Callable[[], object] | None = None, tick_s: float = 0.25) -> T:
    """Run `work` in a worker thread while this (main) thread waits, so Ctrl-C and SIGTERM are seen
    at once even while the work is inside C code: `stop()` is called, the work gets `grace_s` to
    end, and the KeyboardInterrupt (or `Terminated`) goes on, whether it ended or not. `tick` is
    called every `tick_s` while waiting (a progress line). Outside the main thread `work` just runs.
    The KeyboardInterrupt it re-raises carries `exit_without_finalizing = True`."""
    if threading.current_thread() is not threading.main_thread():
        return work()
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="stoppable-work", daemon=True)
    try:
        worker.start()  # (on a busy machine the signal can come before start() returns)
        while worker.is_alive():
            worker.join(tick_s)
            if tick is not None and worker.is_alive():
                tick()
    except KeyboardInterrupt as exc:
        stop()
        worker.join(grace_s)
        # The interpreter must not wind down around native threads the work leaves (DuckDB's, or
        # the work itself, still in C code): a thread woken in a finalizing interpreter aborts
        # the process ("terminate called … exception not rethrown"). The caller, once its
        # cleanup has run, ends with os._exit.
        exc.exit_without_finalizing = True  # type: ignore[attr-defined]
        raise
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]
