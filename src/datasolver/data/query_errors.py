"""A failed query's error as the engine's (`query_error`): DuckDB's error parsed once
(duck_errors.py) and followed by the engine's hints (the `HINTS` stage, `rules/engine_stages.py`); a
table DuckDB does not know is UnknownTable, saying why its file was not read (`unread_hint`) or the
nearest names (`nearest_hint`), as `Catalog.resolve` says it."""

from __future__ import annotations

import difflib
import re
import threading
from pathlib import Path
from typing import Protocol

import duckdb

from datasolver.data.compressed import table_stem
from datasolver.data.duck_errors import compact_error, parse_duck_error
from datasolver.data.errors import DataError, QueryError, UnknownTable
from datasolver.data.lazy_load import TableEntry
from datasolver.data.load_notes import LoadNote
from datasolver.data.names import canonical_name
from datasolver.data.rules.engine_stages import error_hints
from datasolver.data.rules.protocol import Schema

NAMES_LISTED = 10  # an unknown table's message lists this many names when none is close
_NOT_READ = re.compile(r"^not (?:read|loaded): ")  # a reason said after "x was not read: "
UNREAD_SHOWN = 4  # files named as not read when a query names their table



class Named(Schema, Protocol):
    """What of a `Catalog` its errors read (catalog.py's `Catalog.__init__` says each)."""

    _lock: threading.RLock
    _entries: dict[str, TableEntry]
    _lookup: dict[str, str]
    _skipped: list[LoadNote]


def query_error(catalog: Named, exc: duckdb.Error, sql: str, unloaded: list[str] | None = None) -> DataError:
    """DuckDB's error as the engine's: a table DuckDB does not know (it would suggest its own
    system tables, since the catalog's tables load lazily) is UnknownTable with the nearest
    names, as `Catalog.resolve` says it; anything else is a QueryError."""
    duck = parse_duck_error(exc)
    missing = duck.missing_table if isinstance(exc, duckdb.CatalogException) else None
    if missing and missing.lower() not in {n.lower() for n in unloaded or []}:
        name = missing
        return UnknownTable(f"no table named {name!r}.{unread_hint(catalog, name) or nearest_hint(catalog, name)}")
    if missing and (unread := unread_hint(catalog, missing)):
        return QueryError(f"table {missing!r} could not be loaded:{unread}", sql, unloaded=unloaded)
    message = compact_error(exc, sql) + error_hints(duck, sql, catalog)
    if unloaded:
        message += f" (could not load: {', '.join(unloaded)})"
    return QueryError(message, sql, unloaded=unloaded)


def unread_hint(catalog: Named, name: str) -> str:
    """` csv/x.csv.gz was not read: <why>.` for the files that would have made table `name`
    (a file skipped, or a table that failed to load); "" when none."""
    key = canonical_name(name.strip().strip('"`[]'))
    with catalog._lock:
        found = [(e.source.relpath, e.error) for e in catalog._entries.values() if e.error and e.name == key]
        found += [(n.path, n.reason) for n in catalog._skipped if canonical_name(table_stem(Path(n.path))) == key]
    if not found:
        return ""
    said = [f"{path} was not read: {_NOT_READ.sub('', reason or '')}" for path, reason in found[:UNREAD_SHOWN]]
    return " " + "; ".join(said) + "."


def nearest_hint(catalog: Named, key: str) -> str:
    """` Nearest: a, b.` — the canonical names closest to `key`; when none is close, the first
    few names (` Tables: a, b, … (N in all).`)."""
    near = difflib.get_close_matches(key.lower(), list(catalog._lookup), n=5, cutoff=0.3)
    nearest = dict.fromkeys(catalog._lookup[c] for c in near)
    if nearest:
        return f" Nearest: {', '.join(nearest)}."
    names = catalog.names()
    if not names:
        return " The catalog has no tables."
    more = f", … ({len(names)} in all)" if len(names) > NAMES_LISTED else ""
    return f" Tables: {', '.join(names[:NAMES_LISTED])}{more}."
