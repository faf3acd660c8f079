"""Read SQLite tables and views with Python's sqlite3 (no DuckDB extension, so never any network).

DuckDB's sqlite extension is downloaded on first use; offline that fails. Reading through the
standard library costs more per row (NOTES: ~0.9 s for 200k×10) but works everywhere, keeps
typeless and mixed-type columns exact (see arrow_columns), and only runs for tables a query touches.

Every statement runs under a progress handler, because an 8 KB file can hold a view that never
ends (`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM r)`) and Python's sqlite3 has no
other way to stop a statement: a read stops when the caller's `stop()` says so (the catalog's
interrupt and timeout), a view's read also after VIEW_BUDGET_S or VIEW_MAX_ROWS rows, and a count
for a listing after COUNT_BUDGET_S (the rows then show as unknown). A table's scan is bounded by its
file, which the input caps bound.

Rows and seconds do not bound bytes: one `hex(zeroblob(2e8))` is one VM step and 400 MB, so an 8 KB
file whose view gives six such rows took a read to 5.4 GB. Every connection refuses a string or
blob longer than MAX_VALUE_BYTES (`SQLITE_LIMIT_LENGTH`), and what SQLite computes rather than
stores (a view, a virtual table, a table's generated columns) is read within MAX_COMPUTED_BYTES,
counted row by row inside SQLite before a row reaches Python.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from datasolver.data.arrow_columns import TextTable, table_from_columns
from datasolver.data.errors import SourceSkipped, SourceStopped
from datasolver.data.names import quote_ident, unique_names
from datasolver.sizes import human_size

FETCH_BATCH = 50_000
PROGRESS_STEPS = 20_000  # SQLite VM instructions between two checks (well under a millisecond)
SCHEMA_BUDGET_S = 5.0  # reading the catalogue of one file
COUNT_BUDGET_S = 2.0  # a row count shown by a listing
VIEW_BUDGET_S = 30.0  # reading all rows of one view (a table's scan is bounded by its file)
VIEW_MAX_ROWS = 5_000_000
MAX_VALUE_BYTES = 16 << 20  # the longest string or blob any statement may make
MAX_COMPUTED_BYTES = 64 << 20  # text and blobs one view (or computed table) may give, all rows together
_BUDGET_FUNCTION = "datasolver_bytes_budget"
Stop = Callable[[], bool]


def _never() -> bool:
    return False


@dataclass(frozen=True)
class SqliteObject:
    name: str
    kind: str  # "table" or "view"
    columns: list[str] | None = None  # as a load names them; None when SQLite could not say


def _connect(path: Path, budget_s: float | None = None, stop: Stop = _never) -> sqlite3.Connection:
    """A read-only connection whose statements end once `stop()` is true or `budget_s` has passed."""
    # immutable=1: the input folder is read-only, so no locks or journal files are attempted.
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    conn = sqlite3.connect(uri, uri=True)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    deadline = None if budget_s is None else time.monotonic() + budget_s
    conn.set_progress_handler(lambda: stop() or (deadline is not None and time.monotonic() > deadline),
                              PROGRESS_STEPS)
    return conn


def _stopped_reason(exc: sqlite3.Error, stop: Stop, budget_s: float | None) -> str | None:
    """Why a statement the progress handler ended was stopped; None for any other error."""
    if "interrupted" not in str(exc):
        return None
    return "stopped" if stop() else f"took longer than {budget_s:g} s"


class _ByteBudget:
    """What a computed object's rows may hold; called by SQLite once per row with its length."""

    def __init__(self, limit: int) -> None:
        self.limit, self.used, self.passed = limit, 0, False

    def __call__(self, size: int | None) -> int:
        self.used += size or 0
        if self.used > self.limit:
            self.passed = True
            raise OverflowError("over the byte budget")  # ends the statement before the row is returned
        return 1


def _computed(conn: sqlite3.Connection, name: str, kind: str) -> bool:
    """Whether SQLite computes the object's rows (a view, a virtual table, generated columns)
    rather than reading them from the file."""
    if kind == "view":
        return True
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    if sql and isinstance(sql[0], str) and sql[0].lstrip().upper().startswith("CREATE VIRTUAL"):
        return True
    return any(row[-1] in (2, 3) for row in conn.execute(f"PRAGMA table_xinfo({quote_ident(name)})"))


def _select(conn: sqlite3.Connection, name: str, kind: str) -> tuple[str, _ByteBudget | None]:
    """The statement that reads every row, and the byte budget it counts against (computed objects)."""
    plain = f"SELECT * FROM {quote_ident(name)}"
    if not _computed(conn, name, kind):
        return plain, None
    columns = [d[0] for d in conn.execute(plain + " LIMIT 0").description]
    budget = _ByteBudget(MAX_COMPUTED_BYTES)
    conn.create_function(_BUDGET_FUNCTION, 1, budget)
    sizes = " + ".join(f"coalesce(length(CAST({quote_ident(c)} AS BLOB)), 0)" for c in columns) or "0"
    return f"{plain} WHERE {_BUDGET_FUNCTION}({sizes})", budget


def list_objects(path: Path) -> list[SqliteObject]:
    """Every user table and view, in name order; raise SourceSkipped for a corrupt file."""
    try:
        conn = _connect(path, SCHEMA_BUDGET_S)
        try:
            rows = conn.execute(
                "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            ).fetchall()
            objects = [SqliteObject(name, kind, _column_names(conn, name)) for name, kind in rows]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise SourceSkipped(f"not a readable SQLite database: {exc}") from exc
    return objects


def _column_names(conn: sqlite3.Connection, name: str) -> list[str] | None:
    """The columns of a table or view from the schema alone (no row is read)."""
    try:
        cursor = conn.execute(f"SELECT * FROM {quote_ident(name)} LIMIT 0")
    except sqlite3.DatabaseError:
        return None
    return unique_names([d[0] for d in cursor.description])


def count_rows(path: Path, name: str) -> int | None:
    """The rows of a table or view, or None when unknown within COUNT_BUDGET_S (or unreadable)."""
    try:
        conn = _connect(path, COUNT_BUDGET_S)
        try:
            return conn.execute(f"SELECT count(*) FROM {quote_ident(name)}").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def read_object(path: Path, name: str, kind: str = "table", stop: Stop = _never) -> TextTable:
    """All rows of one table or view as an Arrow table (text columns marked for inference).

    Ends with SourceSkipped once `stop()` is true, and for a view past VIEW_BUDGET_S or
    VIEW_MAX_ROWS rows (a view's rows are not bounded by the file).
    """
    budget_s = VIEW_BUDGET_S if kind == "view" else None
    budget: _ByteBudget | None = None
    try:
        conn = _connect(path, budget_s, stop)
        try:
            conn.text_factory = _text_or_bytes
            statement, budget = _select(conn, name, kind)
            cursor = conn.execute(statement)
            names = unique_names([d[0] for d in cursor.description])
            columns: list[list[object]] = [[] for _ in names]
            rows = 0
            while batch := cursor.fetchmany(FETCH_BATCH):
                # zip(*rows) transposes in C; a per-value Python loop costs several times more.
                for column, values in zip(columns, zip(*batch)):
                    column.extend(values)
                rows += len(batch)
                if kind == "view" and rows > VIEW_MAX_ROWS:
                    raise SourceSkipped(f"SQLite view {name!r} gives more than {VIEW_MAX_ROWS:,} rows; "
                                        "query the tables it reads instead")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        if budget is not None and budget.passed:
            raise SourceSkipped(f"SQLite {kind} {name!r} gives more than {human_size(MAX_COMPUTED_BYTES)} of text "
                                "and blobs; query the tables it reads instead") from exc
        if "too big" in str(exc):  # SQLITE_TOOBIG: SQLITE_LIMIT_LENGTH
            raise SourceSkipped(f"SQLite {kind} {name!r} holds a value longer than {human_size(MAX_VALUE_BYTES)}, "
                                "more than a table cell needs; not loaded") from exc
        reason = _stopped_reason(exc, stop, budget_s)
        if reason == "stopped":
            raise SourceStopped(f"SQLite {kind} {name!r}: the read was stopped") from exc
        raise SourceSkipped(f"SQLite {kind} {name!r}: {f'the read {reason}' if reason else exc}") from exc
    return table_from_columns(names, columns)


def _text_or_bytes(raw: bytes) -> str | bytes:
    """TEXT that is not valid UTF-8 is kept as bytes (rendered as hex later) instead of failing."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw

