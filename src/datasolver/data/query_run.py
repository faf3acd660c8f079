"""Running one read-only statement on a catalog (`run_statement`, under `Catalog.sql` and
`query`): the tables it names loaded first (or read straight from their files), guarded, run with
repair (sql_repair.py); a table whose straight read fails is loaded and the query run again; a
listing of the catalog (SHOW TABLES, information_schema, …) runs on a mirror of what the catalog
holds (`_names_mirror`).

The connections and the tables' state are the catalog's; `Querying` names what these functions
read and write of it.
"""

from __future__ import annotations

import re
import time
from typing import Callable, Protocol, TypeVar

import duckdb

from datasolver.data.duck_settings import OPEN_CONFIG, confine, connection_config
from datasolver.data.errors import QueryInterrupted
from datasolver.data.guard import check_read_only, lists_the_catalog, shows_how_tables_are_read
from datasolver.data.lazy_load import Loading, ensure_loaded, table_column_types
from datasolver.data.names import quote_ident
from datasolver.data.operations import check_stopped, operation, stopped_message
from datasolver.data.query_errors import Named, query_error
from datasolver.data.sql_repair import RepairOutcome, execute_with_repair
from datasolver.data.sql_tokens import tokenize

T = TypeVar("T")


class Querying(Loading, Named, Protocol):
    """What of a `Catalog` its queries read and write (catalog.py's `Catalog.__init__` says each)."""

    _session_views: dict[str, str]

    def _reader(self) -> duckdb.DuckDBPyConnection: ...
    def referenced_tables(self, sql: str) -> list[str]: ...


def run_statement(catalog: Querying, sql: str, fetch: Callable[[duckdb.DuckDBPyRelation], T],
                   timeout_s: float | None) -> RepairOutcome[T]:
    with catalog._lock, operation(catalog, timeout_s):
        referenced = catalog.referenced_tables(sql)
        # A plan or a view's SQL over a file read straight would name the file's path: load first.
        ensure_loaded(catalog, referenced, scan=catalog._scan_before_load and not shows_how_tables_are_read(sql))
        try:
            return _run_loaded(catalog, sql, fetch, referenced)
        except _ScanFailed:
            # A table read straight from its file holds what its scan cannot read (a ragged row,
            # a value its sampled type does not fit): load it the careful way, then run again.
            scanned = [n for n in referenced if catalog._entries[n].scanned and not catalog._entries[n].loaded]
            for name in scanned:
                catalog._entries[name].scanned = None
            ensure_loaded(catalog, scanned)
            return _run_loaded(catalog, sql, fetch, referenced)


def _run_loaded(catalog: Querying, sql: str, fetch: Callable[[duckdb.DuckDBPyRelation], T],
                referenced: list[str]) -> RepairOutcome[T]:
    # Parsed on the connection the query will use: one DuckDB database fewer per process.
    check_read_only(sql, catalog._reader())
    failed = [n for n in referenced if catalog._entries[n].error]
    scanning = [n for n in referenced if catalog._entries[n].scanned and not catalog._entries[n].loaded]
    listing = _lists_names_only(catalog, sql)
    suspicious_ok = False
    scan_failed = False

    def run(text: str) -> T:
        nonlocal scan_failed
        if scan_failed:  # no rewrite is tried over a file the scan cannot read
            raise duckdb.InvalidInputException("a table read straight from its file must be loaded first")
        if text != sql:
            check_read_only(text, catalog._reader())  # a rewrite must pass the same guard
        check_stopped(catalog, sql)
        conn = _names_mirror(catalog, text) if listing else catalog._reader()
        try:
            rel = conn.sql(text)
            if rel is None:
                raise duckdb.InvalidInputException("the statement returned no result")
            if not suspicious_ok and _has_bracket_list_column(rel):
                raise _BracketListResult()
            return fetch(rel)
        except duckdb.Error as exc:
            if scanning and not listing and not isinstance(exc, (duckdb.InterruptException, _BracketListResult)):
                scan_failed = True
            raise
        finally:
            if listing:
                conn.close()

    try:
        with catalog._state:
            catalog._activity = (f"reading {', '.join(catalog._entries[n].source.relpath for n in scanning)}",
                              time.monotonic(), True) if scanning else None
        try:
            return execute_with_repair(sql, run, lambda: _known_columns(catalog), lambda: _known_text_columns(catalog))
        except _BracketListResult:
            # No rewrite worked either: the list literal was apparently meant.
            suspicious_ok = True
            return execute_with_repair(sql, run, lambda: _known_columns(catalog), lambda: _known_text_columns(catalog))
    except (QueryInterrupted, duckdb.InterruptException) as exc:
        raise QueryInterrupted(stopped_message(catalog._stopped or "interrupted"), sql) from exc
    except duckdb.Error as exc:
        if scan_failed:
            raise _ScanFailed() from exc
        raise query_error(catalog, exc, sql, failed) from exc
    finally:
        with catalog._state:
            catalog._activity = None


def _lists_names_only(catalog: Querying, sql: str) -> bool:
    """Whether `sql` lists the catalog (SHOW TABLES, information_schema, …) while some table is
    not in the catalog's own file (a cached table's file attached, a file read straight: temp
    views DuckDB would list beside its attached `t` tables), and names none of the tables
    outside a string: it then runs on `_names_mirror`, which lists what the catalog holds."""
    if not lists_the_catalog(sql):
        return False
    if not _TABLES_LISTING.match(sql) and not any(
            e.stored is not None or (e.scanned and not e.loaded) for e in catalog._entries.values()):
        return False
    names = {t.text.strip('"`').lower() for t in tokenize(sql) if t.kind in ("word", "ident", "backtick")}
    return not any(name in catalog._lookup for name in names)


def _names_mirror(catalog: Querying, sql: str) -> duckdb.DuckDBPyConnection:
    """An in-memory database that DuckDB's listings (SHOW TABLES, DESCRIBE, information_schema,
    duckdb_tables(), sqlite_master) read as they read a catalog without a table cache: each table
    an empty table with its columns and types, each alias a view of it, each session view a temp
    view. Only for SQL that lists: it holds no rows (`_lists_names_only`). SHOW TABLES and its
    kin list the tables alone (the aliases were every name again: 14 names for 7 tables); the
    aliases stay views in information_schema and duckdb_views(), marked as such."""
    with_aliases = not _TABLES_LISTING.match(sql)
    reader = catalog._reader()
    mirror = duckdb.connect(":memory:", config=connection_config(OPEN_CONFIG))
    try:
        for entry in catalog._entries.values():
            if entry.error or not (entry.loaded or entry.scanned):
                continue
            columns = ", ".join(f"{quote_ident(c)} {t}" for c, t in table_column_types(reader, entry.name))
            mirror.execute(f"CREATE TABLE {quote_ident(entry.name)} ({columns})")
            for alias in entry.aliases if with_aliases else ():
                mirror.execute(f"CREATE VIEW {quote_ident(alias)} AS SELECT * FROM {quote_ident(entry.name)}")
        for name, view in catalog._session_views.items():
            mirror.execute(f"CREATE TEMP VIEW {quote_ident(name)} AS {view}")
        confine(mirror, [], [])
    except BaseException:
        mirror.close()
        raise
    return mirror


def _known_columns(catalog: Querying) -> list[str]:
    rows = catalog._reader().execute("SELECT DISTINCT column_name FROM duckdb_columns() WHERE NOT internal").fetchall()
    return [r[0] for r in rows]


def _known_text_columns(catalog: Querying) -> list[str]:
    rows = catalog._reader().execute(
        "SELECT DISTINCT column_name FROM duckdb_columns() WHERE NOT internal AND data_type = 'VARCHAR'").fetchall()
    return [r[0] for r in rows]


class _ScanFailed(Exception):
    """A query over a table read straight from its file failed; the table is loaded and the query run again."""


class _BracketListResult(duckdb.Error):
    """A T-SQL `[column]` ran as a DuckDB list literal; treated as a failure so repair quotes it."""


_TABLES_LISTING = re.compile(r"\s*(SHOW(\s+ALL)?\s+TABLES|PRAGMA\s+show_tables|SHOW|DESCRIBE)\s*;?\s*\Z", re.IGNORECASE)


def _has_bracket_list_column(rel: duckdb.DuckDBPyRelation) -> bool:
    return any(
        str(t).endswith("[]") and name.startswith(("list_value(", "main.list_value("))
        for name, t in zip(rel.columns, rel.types)
    )
