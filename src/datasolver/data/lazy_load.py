"""Loading a catalog's tables on first use: each table into its own file of the table cache
(attached to the query connection afterwards) or, without one, into the catalog's own file; with
scan_before_load, a table DuckDB can scan itself is read straight from its file until `persist`
loads it. A load is one of the catalog's operations (operations.py): it stops before its next
table, and a stopped table stays loadable.

The tables' state (`TableEntry`) and the connections are the catalog's; `Loading` names what these
functions read and write of it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import duckdb

from datasolver.data.csv_source import sql_literal
from datasolver.data.duck_settings import OPEN_CONFIG, confine, connection_config, reader_config
from datasolver.data.errors import QueryInterrupted, SourceStopped
from datasolver.data.load_notes import LoadNote
from datasolver.data.names import quote_ident
from datasolver.data.operations import Stoppable, check_stopped, operation, stopped_message
from datasolver.data.sources import Source, unreadable_reason
from datasolver.data.table_cache import TABLE, CachedTable, PendingEntry, TableCache
from datasolver.data.table_load import LoadContext
from datasolver.sizes import human_size

SMALL_SOURCE_BYTES = 16 << 20  # a cached table from a file smaller than this is written with small blocks
SMALL_BLOCK_BYTES = 16384
LOADING = "datasolver_loading"  # how the cache file a table is being loaded into is attached to the loader


@dataclass
class TableEntry:
    name: str
    source: Source
    aliases: list[str] = field(default_factory=list)
    loaded: bool = False
    error: str | None = None
    notes: list[LoadNote] = field(default_factory=list)
    shape: tuple[int, list[tuple[str, str]]] | None = None  # rows, (column, type) as loaded (it never changes)
    stored: CachedTable | None = None  # loaded into the table cache: attached, not in the catalog's own file
    scanned: str | None = None  # read straight from its file by queries until loaded (scan_before_load)
    reused: bool = False  # found in the table cache when the catalog opened



class Loading(Stoppable, Protocol):
    """What of a `Catalog` its loads read and write (catalog.py's `Catalog.__init__` says each)."""

    _lock: threading.RLock
    _entries: dict[str, TableEntry]
    _lookup: dict[str, str]
    _cache: TableCache | None
    _scan_before_load: bool
    _load_options: str
    _dir: Path
    _db_path: Path
    _writing: PendingEntry | None

    def _close_read_only(self) -> None: ...


def use_cached(catalog: Loading, cache: TableCache) -> None:
    """Take every table the cache holds for these unchanged files, once its file proved usable:
    it attaches and holds the recorded rows, columns and types."""
    found: dict[str, CachedTable] = {}
    for entry in catalog._entries.values():
        if not entry.loaded:
            cached = cache.lookup(entry.source.path, entry.source.source_name, catalog._load_options)
            if cached is not None:
                found[entry.name] = cached
    if not found:
        return
    probe = duckdb.connect(":memory:", config=connection_config(OPEN_CONFIG))
    try:
        for name, cached in found.items():
            if not _holds_recorded(probe, cached):
                cache.forget(cached)
                continue
            entry = catalog._entries[name]
            entry.stored, entry.loaded, entry.shape = cached, True, (cached.rows, list(cached.columns))
            entry.reused = True
            entry.notes = [LoadNote(entry.source.relpath, text, kind, name) for kind, text in cached.notes]
    finally:
        probe.close()


def read_loaded(catalog: Loading, path: Path) -> None:
    """Query `path` read-only when it holds every table and alias of this catalog (another
    catalog of the same folder loaded them): nothing is read from the files again. Anything
    less, or a file DuckDB cannot open, is ignored."""
    try:
        conn = duckdb.connect(str(path), read_only=True, config=reader_config())
        confine(conn, [], [])
    except duckdb.Error:
        return
    present = {row[0] for row in conn.execute(
        "SELECT table_name FROM duckdb_tables() UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal"
    ).fetchall()}
    if not {n for e in catalog._entries.values() for n in (e.name, *e.aliases)} <= present:
        conn.close()
        return
    catalog._db_path, catalog._ro = path, conn  # never written: every table is loaded already
    for entry in catalog._entries.values():
        entry.loaded = True


def ensure_loaded(catalog: Loading, names: list[str], scan: bool = False) -> None:
    """Load the tables named that are not loaded yet. With `scan`, a table DuckDB can read
    itself is read straight from its file by the queries instead (scan_before_load)."""
    pending = [n for n in names if not catalog._entries[n].loaded and not catalog._entries[n].error]
    if pending or catalog._ro is None:  # the query connection (re)opens: every cached file it attaches must be there
        forget_evicted(catalog)
        pending = [n for n in names if not catalog._entries[n].loaded and not catalog._entries[n].error]
    if scan:
        if _scan_first(catalog, [catalog._entries[n] for n in pending if not catalog._entries[n].scanned]):
            catalog._close_read_only()  # reopened with views over the files it now reads
        pending = [n for n in pending if not catalog._entries[n].scanned]
    if not pending:
        return
    check_stopped(catalog)
    catalog._close_read_only()
    private = []
    try:
        private = _load_into_cache(catalog, [catalog._entries[name] for name in pending])
        if private:
            _set_activity(catalog, private[0])
            rw = _loader(catalog, catalog._db_path, private)
            try:
                for entry in private:
                    check_stopped(catalog)
                    _set_activity(catalog, entry)
                    _load_one(catalog, rw, entry, entry.name)
            finally:
                with catalog._state:
                    catalog._rw = None
                    rw.close()
    finally:
        with catalog._state:
            catalog._activity = None


def forget_evicted(catalog: Loading) -> None:
    """Tables whose table-cache file is gone (the cache's size cap removed it in another process)
    count as not loaded, so that the next query that names one loads it again (one the query
    connection has attached stays readable while it is open: the file lives on until closed)."""
    for entry in catalog._entries.values():
        if entry.stored is not None and not os.path.exists(entry.stored.db):
            entry.stored, entry.loaded, entry.shape, entry.reused = None, False, None, False


def _loader(catalog: Loading, path: Path | str, entries: list[TableEntry], folders: tuple[Path, ...] = ()) -> duckdb.DuckDBPyConnection:
    """A writable connection on `path` that may read only the files these entries' sources read,
    the catalog's scratch folder and `folders`; it is the one `interrupt()` stops while it exists."""
    config = connection_config(OPEN_CONFIG)
    if path == ":memory:":  # where it spills: its own scratch, never the working directory
        config["temp_directory"] = str(catalog._dir / "loader.tmp")
    rw = duckdb.connect(str(path), config=config)
    try:
        confine(rw, [p for e in entries for p in e.source.reads], [catalog._dir, *folders], progress=True)
    except BaseException:
        rw.close()
        raise
    with catalog._state:
        catalog._rw = rw
    return rw


def _load_into_cache(catalog: Loading, entries: list[TableEntry]) -> list[TableEntry]:
    """Load each table into a fresh file of the table cache and put it into place; returns those
    the cache cannot take (to be loaded into the catalog's own file). One loader connection
    serves them all, each table's file attached in turn: a DuckDB instance costs ~20 ms of CPU,
    an attached file ~5 (listing the 80 dev tasks' ~1,000 tables: ~20 CPU-s less)."""
    if catalog._cache is None:
        return list(entries)
    private: list[TableEntry] = []
    rw = None
    try:
        for entry in entries:
            check_stopped(catalog)
            entry.scanned = None
            _set_activity(catalog, entry)
            pending = catalog._cache.begin(entry.source.path, entry.source.source_name, catalog._load_options)
            if pending is None:
                private.append(entry)
                continue
            if rw is None:
                rw = _loader(catalog, ":memory:", entries, (catalog._cache.root,))
            _load_attached(catalog, rw, entry, pending)
    finally:
        if rw is not None:
            with catalog._state:
                catalog._rw = None
            rw.close()
    return private


def _load_attached(catalog: Loading, rw: duckdb.DuckDBPyConnection, entry: TableEntry, pending: PendingEntry) -> None:
    """Load one table into `pending`'s fresh file, attached to the loader `rw`, and commit it. A
    small table's file gets small blocks (a cached table of a few rows takes ~45 KB on disk
    instead of DuckDB's 512 KB minimum)."""
    catalog._writing = pending  # close() removes it if an interrupted load cannot end in time
    blocks = f" (BLOCK_SIZE {SMALL_BLOCK_BYTES})" if file_size(entry.source.path) < SMALL_SOURCE_BYTES else ""
    try:
        with catalog._state:  # attaching is not the load: an interrupt now would leave a DuckDB error
            catalog._rw = None
        rw.execute(f"ATTACH {sql_literal(str(pending.db))} AS {LOADING}{blocks}")
        try:
            rw.execute(f"USE {LOADING}")
            with catalog._state:
                catalog._rw = rw
            _load_one(catalog, rw, entry, TABLE)
        finally:
            with catalog._state:  # off the interrupt list first, so the file is closed whole
                catalog._rw = None
            rw.execute("USE memory")
            rw.execute(f"DETACH {LOADING}")
        if not entry.loaded:  # unreadable: noted in entry.error
            pending.abort()
            return
        rows, columns = entry.shape
        entry.stored = pending.commit(rows, columns, [(n.kind, n.reason) for n in entry.notes],
                                      lambda: catalog._stopped is not None)
    except BaseException:
        pending.abort()
        raise
    finally:
        catalog._writing = None


def _scan_first(catalog: Loading, entries: list[TableEntry]) -> bool:
    """Whether queries read any of these tables straight from its file for now (scan_before_load):
    the typed relation over each such table is kept in its `entry.scanned`. One probe connection
    serves them all (a DuckDB instance costs ~20 ms of CPU)."""
    scannable = [e for e in entries if catalog._scan_before_load and e.source.scan is not None]
    if not scannable:
        return False
    probe = duckdb.connect(":memory:", config=connection_config(OPEN_CONFIG))
    try:
        confine(probe, [p for e in scannable for p in e.source.reads], [])
        with catalog._state:
            catalog._rw = probe
        for entry in scannable:
            entry.scanned = entry.source.scan(probe)
    except duckdb.InterruptException:
        raise QueryInterrupted(stopped_message(catalog._stopped or "interrupted")) from None
    finally:
        with catalog._state:
            catalog._rw = None
        probe.close()
    return any(e.scanned is not None for e in scannable)


def _load_one(catalog: Loading, rw: duckdb.DuckDBPyConnection, entry: TableEntry, target: str) -> None:
    """Load one table into `rw` as `target` (and, in the catalog's own file, its aliases)."""
    aliases = entry.aliases if target == entry.name else []
    stop = lambda: catalog._stopped is not None  # noqa: E731
    try:
        notes = entry.source.load(LoadContext(rw, target, catalog._dir, stop))
        check_stopped(catalog)
        for alias in aliases:
            rw.execute(f"CREATE VIEW {quote_ident(alias)} AS SELECT * FROM {quote_ident(target)}")
        entry.notes = [LoadNote(entry.source.relpath, text, kind, entry.name) for kind, text in notes]
        # Read once here, so listing a loaded table needs no query.
        rows = rw.execute(f"SELECT count(*) FROM {quote_ident(target)}").fetchall()[0][0]
        entry.shape = (rows, table_column_types(rw, target))
        entry.loaded = True
    except (QueryInterrupted, SourceStopped, duckdb.InterruptException):
        # Stopped, not broken: the table stays loadable for the next operation. The loader
        # connection leaves the interrupt list first, so these clean-up statements finish.
        with catalog._state:
            catalog._rw = None
        rw.execute(f"DROP TABLE IF EXISTS {quote_ident(target)}")
        for alias in aliases:
            rw.execute(f"DROP VIEW IF EXISTS {quote_ident(alias)}")
        check_stopped(catalog)
        raise QueryInterrupted(stopped_message("interrupted"))
    except Exception as exc:  # noqa: BLE001 - one unreadable table never stops the others
        entry.error = unreadable_reason(exc)
        rw.execute(f"DROP TABLE IF EXISTS {quote_ident(target)}")
        _drop_alias_entries(catalog, entry)


def _set_activity(catalog: Loading, entry: TableEntry) -> None:
    """Say which table is loading now (for `activity()` and a timeout's message)."""
    size = file_size(entry.source.path)
    what = f"loading {entry.name} ({entry.source.relpath}{f', {human_size(size)}' if size else ''})"
    with catalog._state:
        catalog._activity = (what, time.monotonic(), False)


def _drop_alias_entries(catalog: Loading, entry: TableEntry) -> None:
    for key in [k for k, v in catalog._lookup.items() if v == entry.name]:
        del catalog._lookup[key]


def persist_scanned(catalog: Loading, timeout_s: float | None, leave_from_bytes: int | None) -> list[tuple[str, str, int]]:
    """`Catalog.persist`: the tables read straight so far loaded into the table cache, but for those
    of `leave_from_bytes` or more, returned as (name, source file, bytes)."""
    with catalog._lock:
        scanned = [e for e in catalog._entries.values() if e.scanned and not e.loaded and not e.error]
        if not scanned or catalog._cache is None:
            return []
        left = [e for e in scanned if leave_from_bytes is not None and file_size(e.source.path) >= leave_from_bytes]
        now = [e.name for e in scanned if e not in left]
        if now:
            with operation(catalog, timeout_s):
                ensure_loaded(catalog, now)
        return [(e.name, e.source.relpath, file_size(e.source.path)) for e in left]


def load_options(codec: str | None, header_row: int | None) -> str:
    """The options that change what a file loads as (part of a cached table's key)."""
    return " ".join(o for o in (f"encoding={codec}" if codec else "",
                                f"header_row={header_row}" if header_row else "") if o)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _holds_recorded(conn: duckdb.DuckDBPyConnection, cached: CachedTable) -> bool:
    """Whether a cached table's file attaches and holds the rows, columns and types its record says."""
    alias = "probe"
    try:
        conn.execute(f"ATTACH {sql_literal(str(cached.db))} AS {alias} (READ_ONLY)")
    except duckdb.Error:
        return False
    try:
        rows = conn.execute(f"SELECT count(*) FROM {alias}.{TABLE}").fetchall()[0][0]
        return rows == cached.rows and table_column_types(conn, f"{alias}.{TABLE}", quoted=True) == list(cached.columns)
    except duckdb.Error:
        return False
    finally:
        conn.execute(f"DETACH {alias}")


def table_column_types(conn: duckdb.DuckDBPyConnection, table: str, quoted: bool = False) -> list[tuple[str, str]]:
    """(column, type) as DESCRIBE gives them, from the relation's schema: DESCRIBE is a query
    (~3 ms of CPU a table, most of a small table's profile); the schema is ~0.3 ms."""
    relation = conn.table(table if quoted else quote_ident(table))
    return [(column, str(kind)) for column, kind in zip(relation.columns, relation.types)]
