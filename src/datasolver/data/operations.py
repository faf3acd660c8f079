"""A catalog's operations, stoppable from any thread: each public operation (query, describe,
load) is one `operation`, ended by its timeout or by `stop_operation` (`Catalog.interrupt`); DuckDB is
interrupted mid-query and again every STOP_REPEAT_S until the operation ends, a load stops before
its next table, and the caller gets QueryInterrupted (`check_stopped`, `interruptible`, with
`stopped_message`'s words). `current_activity` says what a long operation is doing now.

The state is the catalog's, under its `_state` lock (never held while SQL runs, so a stop can
always take it); `Stoppable` names what these functions read and write of it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import duckdb

from datasolver.data.errors import QueryInterrupted

STOP_REPEAT_S = 0.02  # how often a stopped operation's connections are interrupted again


class Stoppable(Protocol):
    """What of a `Catalog` its operations' state is (catalog.py's `Catalog.__init__` says each)."""

    timeout_s: float | None
    _state: threading.Lock
    _depth: int
    _op: int
    _stopped: str | None
    _activity: tuple[str, float, bool] | None
    _stoppers: list[threading.Thread]
    _ro: duckdb.DuckDBPyConnection | None
    _rw: duckdb.DuckDBPyConnection | None


@dataclass(frozen=True)
class Activity:
    """What a catalog is doing now that may take a while: `what` for people, `percent` done
    (None when unknown), since when (`time.monotonic()`)."""

    what: str
    percent: float | None
    started: float


@contextmanager
def operation(catalog: Stoppable, timeout_s: float | None) -> Iterator[None]:
    """Mark one public operation (call with catalog._lock held); nested calls join the outer one."""
    with catalog._state:
        catalog._depth += 1
        outer = catalog._depth == 1
        if outer:
            catalog._op += 1
            catalog._stopped = None
        op = catalog._op
    limit = catalog.timeout_s if timeout_s is None else timeout_s
    timer = None
    if outer and limit is not None and limit > 0:
        timer = threading.Timer(limit, stop_operation, (catalog, op, f"timed out after {limit:g} s"))
        timer.daemon = True
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
        with catalog._state:
            catalog._depth -= 1


def stop_operation(catalog: Stoppable, op: int | None, reason: str) -> bool:
    with catalog._state:
        if catalog._depth == 0 or (op is not None and op != catalog._op):
            return False
        first = catalog._stopped is None
        if catalog._activity is not None and not catalog._activity[2] and reason.startswith("timed out"):
            reason += f" while {catalog._activity[0]}"  # a load, not the query, took the time
        catalog._stopped = reason
        op = catalog._op
        _interrupt_connections(catalog)
        if first:
            # DuckDB ignores an interrupt that arrives between two statements (or while a
            # connection is being reopened after a load), so keep interrupting until the
            # operation has ended. Listed once started, under the state lock: close() joins
            # what it lists (a thread listed before its start made join() raise, when the
            # interrupted query and close() ran between the two on a busy machine).
            stopper = threading.Thread(target=_keep_stopping, args=(catalog, op), daemon=True)
            stopper.start()  # it sleeps STOP_REPEAT_S before it takes the state lock
            catalog._stoppers.append(stopper)
    return True


def _keep_stopping(catalog: Stoppable, op: int) -> None:
    while True:
        time.sleep(STOP_REPEAT_S)
        with catalog._state:
            if catalog._depth == 0 or catalog._op != op:
                return
            _interrupt_connections(catalog)


def _interrupt_connections(catalog: Stoppable) -> None:
    for conn in (catalog._ro, catalog._rw):
        if conn is not None:
            conn.interrupt()


def check_stopped(catalog: Stoppable, sql: str = "") -> None:
    with catalog._state:
        reason = catalog._stopped
    if reason is not None:
        raise QueryInterrupted(stopped_message(reason), sql)


def current_activity(catalog: Stoppable) -> Activity | None:
    """What the catalog is doing now that may take long (loading a table, a query reading a file
    straight), with DuckDB's estimate of how far it is; None when nothing such runs. Safe to
    call from any thread while another runs the operation."""
    with catalog._state:
        if catalog._activity is None:
            return None
        what, since, on_reader = catalog._activity
        conn = catalog._ro if on_reader else catalog._rw
    percent = None
    if conn is not None:
        try:
            value = conn.query_progress()
            percent = value if value >= 0 else None
        except duckdb.Error:
            percent = None
    return Activity(what, percent, since)


def stopped_message(reason: str) -> str:
    if reason.startswith("timed out") and " while loading " in reason:
        return (f"query {reason} and was stopped: reading the table took the time, not the query. Allow "
                "more time (sql --timeout, mcp --query-timeout, 0 = no limit), or load it once with `datasolver "
                "tables`: the table cache keeps it for every later command on the same files.")
    if reason.startswith("timed out"):
        return (f"query {reason} and was stopped. Make it cheaper: filter early, aggregate before "
                "joining, avoid cross joins, or select fewer rows.")
    return "query interrupted before it finished (nothing changed; run a query again when ready)."


@contextmanager
def interruptible(catalog: Stoppable, sql: str = "") -> Iterator[None]:
    """Turn DuckDB's interrupt inside an operation into QueryInterrupted with the reason."""
    try:
        yield
    except duckdb.InterruptException as exc:
        raise QueryInterrupted(stopped_message(catalog._stopped or "interrupted"), sql) from exc
