"""Read SQLite tables and views with Python's sqlite3 (no DuckDB extension, so never any network).

DuckDB's sqlite extension is downloaded on first use; offline that fails. Reading through the
standard library costs more per row (NOTES: ~0.9 s for 200k×10) but works everywhere, keeps
typeless and mixed-type columns exact (see arrow_columns), and only runs for tables a query touches.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from datasolver.data.arrow_columns import TextTable, table_from_columns
from datasolver.data.errors import SourceSkipped
from datasolver.data.names import quote_ident, unique_names

FETCH_BATCH = 50_000


@dataclass(frozen=True)
class SqliteObject:
    name: str
    kind: str  # "table" or "view"
    columns: list[str] | None = None  # as a load names them; None when SQLite could not say


def _connect(path: Path) -> sqlite3.Connection:
    # immutable=1: the input folder is read-only, so no locks or journal files are attempted.
    uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
    return sqlite3.connect(uri, uri=True)


def list_objects(path: Path) -> list[SqliteObject]:
    """Every user table and view, in name order; raise SourceSkipped for a corrupt file."""
    try:
        conn = _connect(path)
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
    try:
        conn = _connect(path)
        try:
            return conn.execute(f"SELECT count(*) FROM {quote_ident(name)}").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:
        return None


def read_object(path: Path, name: str) -> TextTable:
    """All rows of one table or view as an Arrow table (text columns marked for inference)."""
    try:
        conn = _connect(path)
        try:
            conn.text_factory = _text_or_bytes
            cursor = conn.execute(f"SELECT * FROM {quote_ident(name)}")
            names = unique_names([d[0] for d in cursor.description])
            columns: list[list[object]] = [[] for _ in names]
            while batch := cursor.fetchmany(FETCH_BATCH):
                # zip(*rows) transposes in C; a per-value Python loop costs several times more.
                for column, values in zip(columns, zip(*batch)):
                    column.extend(values)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise SourceSkipped(f"SQLite {name!r}: {exc}") from exc
    return table_from_columns(names, columns)


def _text_or_bytes(raw: bytes) -> str | bytes:
    """TEXT that is not valid UTF-8 is kept as bytes (rendered as hex later) instead of failing."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw

