"""The Catalog: every table of one task under one canonical DuckDB name, loaded on first use.

Registration only reads headers and metadata. A query first loads the tables it names (matched
against canonical names and aliases), then runs on a read-only, locked DuckDB connection over the
catalog's private cache file. Loading needs a writable connection, so the catalog briefly swaps
the read-only connection for a writable one and back; user SQL never runs on the writable one.

Every operation (query, describe, load) can be stopped from another thread with `interrupt()`, or
by its own timeout: DuckDB is interrupted mid-query, a load stops before its next table, and the
caller gets `QueryInterrupted`. The catalog stays usable.

With a table cache (`Catalog.open(..., table_cache=…)`, see table_cache.py) every table is loaded
into its own file in the cache instead, attached read-only to the query connection; a later catalog
of the same unchanged files reads none of them again. With `scan_before_load` a query reads a table
DuckDB can scan itself (a UTF-8 CSV, Parquet) straight from its file, typed, and `persist()` loads it
into the cache afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

import duckdb

from datasolver.data.compressed import table_stem
from datasolver.data.csv_source import sql_literal
from datasolver.data.duck_errors import compact_error
from datasolver.data.duck_settings import OPEN_CONFIG, confine, connection_config, reader_config
from datasolver.data.encoding import check_codec
from datasolver.data.errors import QueryError, SourceSkipped, UnknownTable
from datasolver.data.files import ContextFiles, list_context_files
from datasolver.data.guard import check_read_only, lists_the_catalog
from datasolver.data.input_files import read_prepared_record
from datasolver.data.input_limits import InputBudget, InputLimits
from datasolver.data.layout import DERIVED, ScratchLayout, TaskFolder
from datasolver.data.lazy_load import (
    TableEntry,
    ensure_loaded,
    forget_evicted,
    load_options,
    persist_scanned,
    read_loaded,
    use_cached,
)
from datasolver.data.load_notes import OTHER, UNREAD, LoadNote
from datasolver.data.names import assign_table_names, canonical_name, quote_ident
from datasolver.data.operations import (
    Activity,
    check_stopped,
    current_activity,
    interruptible,
    operation,
    stop_operation,
)
from datasolver.data.query_errors import nearest_hint, query_error, unread_hint
from datasolver.data.query_run import run_statement
from datasolver.data.relation import Relation
from datasolver.data.results import QueryResult, TableInfo
from datasolver.data.rules.engine_stages import apply_before_run
from datasolver.data.sources import Registration, Source, register_derived, register_files
from datasolver.data.sql_repair import RepairOutcome
from datasolver.data.table_cache import TABLE, PendingEntry, TableCache
from datasolver.data.table_listing import describe_table, table_info

if TYPE_CHECKING:
    from datasolver.data.linking import ValueIndex

CACHE_ALIAS = "datasolver_cache_{index}"  # how a cached table's file is attached to the query connection
LOADED_ENV = "DATASOLVER_LOADED_CATALOG"  # how a sandboxed solver.py run learns its parent's loaded tables
CLOSE_WAIT_S = 0.5  # close() waits this long for a running operation before removing the files anyway
T = TypeVar("T")


SkippedSource = LoadNote  # the name callers knew for a note on a file that could not be read


class Catalog:
    """One task's tables. Use `Catalog.open(task_or_data_dir)`; close it (or use `with`)."""

    def __init__(self, registration: Registration, cache_dir: Path | None = None,
                 timeout_s: float | None = None, loaded: Path | None = None,
                 table_cache: TableCache | None = None, scan_before_load: bool = False,
                 load_options: str = "") -> None:
        self.timeout_s = timeout_s  # default per-operation timeout; None = no limit
        self._lock = threading.RLock()  # held for a whole operation
        # Never held while SQL runs, so interrupt() can always take it: guards which connections
        # exist, the operation counter and the reason the current operation was stopped.
        self._state = threading.Lock()
        self._rw: duckdb.DuckDBPyConnection | None = None
        self._depth = 0
        self._op = 0
        self._stopped: str | None = None
        self._activity: tuple[str, float, bool] | None = None  # (what, since, on the query connection)
        # Threads repeating an interrupt; close() waits for them: one still inside DuckDB when the
        # interpreter exits would abort the process.
        self._stoppers: list[threading.Thread] = []
        self._writing: PendingEntry | None = None  # the table cache entry being written
        self._entries: dict[str, TableEntry] = {}
        self._lookup: dict[str, str] = {}  # lowercase name or alias → canonical name
        self._skipped = [LoadNote(p, r, UNREAD) for p, r in registration.skipped]
        self._notes = [LoadNote(p, r, OTHER) for p, r in registration.notes]
        self._session_views: dict[str, str] = {}
        self._values: ValueIndex | None = None  # built on first `value_index()`
        self._cache = table_cache
        self._scan_before_load = scan_before_load
        self._load_options = load_options
        # The listing `open` registered (walking a folder checks every link: reused, not redone).
        self.context_files: ContextFiles | None = None
        self._assign_names(registration.sources)
        if cache_dir is not None:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix="datasolver-catalog-", dir=cache_dir))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._dir, True)
        self._db_path = self._dir / "catalog.duckdb"
        # Opened on first need (each DuckDB connect costs 20-50 ms; a catalog that is only listed,
        # as for solver.py's scaffold, needs none).
        self._ro: duckdb.DuckDBPyConnection | None = None
        if loaded is not None:
            read_loaded(self, Path(loaded))
        if table_cache is not None:
            use_cached(self, table_cache)

    # ----------------------------------------------------------------- construction
    @classmethod
    def open(cls, path: Path | str, cache_dir: Path | str | None = None, extra_derived: list[Path] | None = None,
             timeout_s: float | None = None, input_limits: InputLimits | None = None,
             loaded: Path | str | None = None, *, encoding: str | None = None, header_row: int | None = None,
             table_cache: TableCache | None = None, scan_before_load: bool = False) -> Catalog:
        """Register every table under a task dir (its context/ plus derived/) or a plain data folder.

        `timeout_s` is the default limit of each query, describe or load (see `interrupt`).
        `input_limits` caps the table files' bytes (default: `InputLimits.from_env()`).
        `loaded` (default: `$DATASOLVER_LOADED_CATALOG`) is another catalog's `loaded_file()` for
        the same folder: it is queried read-only instead of loading the files again.
        `encoding` (a codec name: utf-8, gb18030, cp1252, …) decodes every CSV file instead of the
        encoding chosen by evidence. `header_row` (1-based) is the header's line in every CSV file
        and row in every sheet, instead of the one found below title lines. `table_cache` keeps loaded tables for later catalogs of the
        same files (see table_cache.py; nothing is cached without it). `scan_before_load` lets a
        query read a table DuckDB can scan itself straight from its file until `persist()` loads it.
        """
        path = Path(path)
        if not path.is_dir():
            raise SourceSkipped(f"{path} is not a folder")
        codec = check_codec(encoding) if encoding else None
        context = TaskFolder(path).data_dir()
        reg = Registration()
        budget = InputBudget(input_limits or InputLimits.from_env())
        files = list_context_files(context)
        register_files(files, reg, budget=budget, encoding=codec, header_row=header_row)
        for derived in _own_derived(path, context, reg) + list(extra_derived or []):
            register_derived(Path(derived), reg, budget=budget)
        loaded = loaded if loaded is not None else os.environ.get(LOADED_ENV) or None
        catalog = cls(reg, Path(cache_dir) if cache_dir else None, timeout_s=timeout_s,
                      loaded=Path(loaded) if loaded else None, table_cache=table_cache,
                      scan_before_load=scan_before_load, load_options=load_options(codec, header_row))
        catalog.context_files = files
        return catalog

    def _assign_names(self, sources: list[Source]) -> None:
        namings = assign_table_names([(source.source_name, table_stem(source.path), source.path.name)
                                      for source in sources])
        for source, naming in zip(sources, namings):
            self._entries[naming.name] = TableEntry(naming.name, source, list(naming.aliases))
            self._lookup[naming.name.lower()] = naming.name
            for alias in naming.aliases:
                self._lookup[alias.lower()] = naming.name

    # ----------------------------------------------------------------- listing
    @property
    def skipped(self) -> list[LoadNote]:
        """Files or tables that could not be read (registration or load), with the reason."""
        with self._lock:
            failed = [LoadNote(e.source.relpath + f" [{e.name}]", e.error, UNREAD, e.name)
                      for e in self._entries.values() if e.error]
            return list(self._skipped) + failed

    @property
    def notes(self) -> list[LoadNote]:
        """Non-fatal remarks: the encoding chosen, rows that could not be loaded, characters
        replaced, columns left as text, decimal commas read, keys ignored, hidden files."""
        with self._lock:
            loaded = [n for e in self._entries.values() for n in e.notes]
            cache = [LoadNote("(table cache)", n, OTHER) for n in self._cache.notes] if self._cache else []
            return list(self._notes) + loaded + cache

    def load_notes(self, tables: list[str] | None = None) -> list[LoadNote]:
        """The notes of these tables (names or aliases; every table and the folder's own notes
        when None), as far as their load is known."""
        with self._lock:
            if tables is None:
                return self.notes
            names = [self._lookup.get(t.lower(), t) for t in tables]
            return [n for name in dict.fromkeys(names) if name in self._entries for n in self._entries[name].notes]

    def reused_tables(self) -> list[str]:
        """The tables this catalog took from the table cache instead of reading their files."""
        with self._lock:
            return [e.name for e in self._entries.values() if e.reused]

    @property
    def table_cache(self) -> TableCache | None:
        return self._cache

    def unread_summary(self) -> LoadNote | None:
        """One note saying how many files (or tables in them) could not be read, if any."""
        unread = self.skipped
        if not unread:
            return None
        shown = ", ".join(n.path for n in unread[:3]) + (", …" if len(unread) > 3 else "")
        return LoadNote("(folder)", f"{len(unread)} file(s) not read ({shown}); `datasolver tables` gives each "
                                    "reason", UNREAD)

    def files_of(self, context: Path) -> ContextFiles:
        """The listing of the `context` folder: the one this catalog registered its tables from
        when it is that folder (listing checks every file and link: ~30 ms a dev task), else a new one."""
        listed = self.context_files
        return listed if listed is not None and listed.root == Path(context) else list_context_files(Path(context))

    def loaded_file(self) -> Path | None:
        """The DuckDB file holding every table of this catalog, once all are loaded and none failed
        (None before): another process may open it with `Catalog.open(..., loaded=…)`. Valid while
        this catalog is open and loads nothing more."""
        with self._lock:
            entries = list(self._entries.values())
            if entries and all(e.loaded and e.stored is None for e in entries) and self._db_path.is_file():
                return self._db_path
            return None

    def names(self) -> list[str]:
        return [name for name, e in self._entries.items() if not e.error]

    def tables(self) -> list[TableInfo]:
        """One entry per readable table, rows from cheap metadata where not yet loaded."""
        with self._lock:
            return [table_info(self, e) for e in self._entries.values() if not e.error]

    def table(self, name: str) -> TableInfo:
        with self._lock:
            return table_info(self, self._entries[self.resolve(name)])

    def resolve(self, name: str) -> str:
        """Canonical name for a name or alias (case-insensitive, quotes/brackets tolerated)."""
        key = name.strip().strip('"`[]').lower()
        found = self._lookup.get(key) or self._lookup.get(canonical_name(key))
        if found and not self._entries[found].error:
            return found
        raise UnknownTable(f"no table named {name!r}.{unread_hint(self, key) or nearest_hint(self, key)}")

    def column_names(self, name: str, *, load: bool = True, timeout_s: float | None = None) -> list[str] | None:
        """A table's column names: from what is known without loading (the file's header, SQLite's
        schema), else, with `load`, by loading the table; None when unknown."""
        with self._lock:
            entry = self._entries[self.resolve(name)]
            if not entry.loaded:
                listed = entry.source.columns  # CSV header, SQLite schema, JSON head: read at registration
                if listed or not load:
                    return list(listed) if listed else None
        self.load([entry.name], timeout_s=timeout_s)
        return list(self.table(entry.name).columns or []) or None

    def column_types(self, name: str) -> list[tuple[str, str]]:
        """(column, DuckDB type) of a table, as DESCRIBE names them; loads the table if needed
        (a table that cannot be loaded raises QueryError)."""
        table = self.resolve(name)
        self.load([table])
        with self._lock:
            entry = self._entries[table]
            if entry.error:
                raise QueryError(f"table {table} could not be loaded: {entry.error}")
            table_info(self, entry)  # reads the shape of a table another catalog loaded
            return list(entry.shape[1])

    # ----------------------------------------------------------------- loading
    def load(self, names: list[str] | None = None, timeout_s: float | None = None) -> None:
        """Load the given tables (all when None) now; failures are recorded in `skipped`."""
        with self._lock:
            targets = [self.resolve(n) for n in names] if names is not None else list(self._entries)
            if all(self._entries[n].loaded or self._entries[n].error for n in targets):
                return  # nothing to do: no operation (its timer is a thread started and stopped)
            with operation(self, timeout_s):
                ensure_loaded(self, targets)

    # ----------------------------------------------------------------- stopping
    def interrupt(self) -> bool:
        """Stop the running operation from any thread; True if one was running.

        A DuckDB query is interrupted at once; a table being read in Python finishes reading and
        the load stops before it is stored (already loaded tables stay). The operation's caller
        gets `QueryInterrupted`; the next operation runs normally.
        """
        return stop_operation(self, None, "interrupted")

    @property
    def busy(self) -> bool:
        """True while an operation (query, describe, load) is running in some thread."""
        with self._state:
            return self._depth > 0

    def referenced_tables(self, sql: str) -> list[str]:
        """Tables whose name or alias appears in the SQL as a whole word (over-approximate by design);
        every table when the SQL lists the catalog itself (SHOW TABLES, information_schema, …)."""
        if lists_the_catalog(sql):
            return list(self._entries)
        text = sql.lower()
        hits = []
        for key, name in self._lookup.items():
            for match in re.finditer(re.escape(key), text):
                before = text[match.start() - 1] if match.start() else " "
                after = text[match.end()] if match.end() < len(text) else " "
                if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                    hits.append(name)
                    break
        return list(dict.fromkeys(hits))

    def persist(self, timeout_s: float | None = None, *,
                leave_from_bytes: int | None = None) -> list[tuple[str, str, int]]:
        """Load every table that queries have so far read straight from its file (scan_before_load)
        into the table cache, so that a later catalog of the same files reads none of them again.
        A table whose file holds `leave_from_bytes` or more is left for the caller to cache another
        way (`cache_fill.start_fill`, after the answer): returned as (name, source file, bytes)."""
        return persist_scanned(self, timeout_s, leave_from_bytes)

    def activity(self) -> Activity | None:
        """What the catalog is doing now that may take long (loading a table, a query reading a file
        straight), with DuckDB's estimate of how far it is; None when nothing such runs. Safe to
        call from any thread while another runs the operation."""
        return current_activity(self)

    def _reader(self) -> duckdb.DuckDBPyConnection:
        """The read-only connection (call with self._lock held), opened again after a load."""
        if self._ro is None:
            forget_evicted(self)
            if not self._db_path.exists():  # nothing loaded yet: an empty database to read
                duckdb.connect(str(self._db_path), config=connection_config(OPEN_CONFIG)).close()
            ro = self._open_read_only()
            with self._state:
                self._ro = ro
        return self._ro

    def _open_read_only(self) -> duckdb.DuckDBPyConnection:
        """The query connection: the catalog's file read-only, each cached table's file attached
        read-only and named by a view, each table read straight from its file named by a view;
        then no file access beyond those files, and no setting can change."""
        conn = duckdb.connect(str(self._db_path), read_only=True, config=reader_config())
        try:
            stored = [e for e in self._entries.values() if e.stored is not None]
            for index, entry in enumerate(stored):
                conn.execute(f"ATTACH {sql_literal(str(entry.stored.db))} AS "
                             f"{CACHE_ALIAS.format(index=index)} (READ_ONLY)")
            scanned = [e for e in self._entries.values() if e.scanned and not e.loaded]
            confine(conn, [p for e in scanned for p in e.source.reads], [], progress=bool(scanned))
            for index, entry in enumerate(stored):
                for name in (entry.name, *entry.aliases):
                    conn.execute(f"CREATE TEMP VIEW {quote_ident(name)} AS SELECT * FROM "
                                 f"{CACHE_ALIAS.format(index=index)}.{TABLE}")
            for entry in scanned:
                for name in (entry.name, *entry.aliases):
                    conn.execute(f"CREATE TEMP VIEW {quote_ident(name)} AS {entry.scanned}")
            for name, sql in self._session_views.items():
                conn.execute(f"CREATE TEMP VIEW {quote_ident(name)} AS {sql}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _close_read_only(self) -> None:
        with self._state:
            if self._ro is not None:
                self._ro.close()
                self._ro = None

    # ----------------------------------------------------------------- querying
    def sql(self, sql: str, timeout_s: float | None = None) -> Relation:
        """Read-only SQL as a lazy Relation: it runs (guarded, repaired if needed) when its
        `fetch(limit)`, `df()` or `to_csv(path)` is called; then `rewrites` says what was repaired.

        `timeout_s` overrides the catalog's default; past it the query stops with QueryInterrupted.
        """
        return Relation(lambda text, fetch: self._run(text, fetch, timeout_s), sql,
                        lambda: self.load_notes(self.referenced_tables(sql)))

    def query(self, sql: str, limit: int = 50, timeout_s: float | None = None) -> QueryResult:
        """`sql(sql, timeout_s).fetch(limit)`: the first `limit` rows plus the total count."""
        return self.sql(sql, timeout_s).fetch(limit)

    def _run(self, sql: str, fetch: Callable[[duckdb.DuckDBPyRelation], T],
             timeout_s: float | None = None) -> RepairOutcome[T]:
        # As models write it (a Markdown fence, comments after the last semicolon, PostgreSQL's
        # 4-byte-looking `::float`): the before-run stage of the rulebook, then the run and its repair.
        sql, notes, rules = apply_before_run(sql)
        outcome = run_statement(self, sql, fetch, timeout_s)
        outcome.rewrites[:0] = notes
        outcome.rules[:0] = rules
        return outcome

    def describe(self, name: str, sample_rows: int = 5, timeout_s: float | None = None) -> str:
        """Columns with types and a few sample rows, as compact text (for `\\schema`)."""
        return describe_table(self, name, sample_rows, timeout_s)

    def create_temp_view(self, name: str, sql: str) -> None:
        """A session view (for result handles); it survives the reconnects that lazy loads cause."""
        check_read_only(sql)
        with self._lock, operation(self, None), interruptible(self, sql):
            ensure_loaded(self, self.referenced_tables(sql))
            try:
                self._reader().execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS {sql}")
            except duckdb.Error as exc:
                raise query_error(self, exc, sql) from exc
            self._session_views[name] = sql

    def drop_temp_view(self, name: str) -> None:
        """Forget a session view made by `create_temp_view` (a no-op for unknown names)."""
        with self._lock:
            if self._session_views.pop(name, None) is not None and self._ro is not None:
                self._ro.execute(f"DROP VIEW IF EXISTS {quote_ident(name)}")

    def value_index(self) -> ValueIndex:
        """The distinct text values of every table, for question linking (`data.linking`): built
        on first use (bounded in values and time) and kept for the catalog's life."""
        if self._values is None:
            from datasolver.data.linking import ValueIndex

            self._values = ValueIndex.build(self)
        return self._values

    def own_rows(self, sql: str, timeout_s: float | None = None) -> list[tuple]:
        """Every row of the engine's own SQL (profiles, lint checks, the value index), never a user's:
        no guard, no repair, no row cap, over tables already loaded. DuckDB's errors become a
        QueryError. With `timeout_s` the query is one operation of its own, interrupted after that
        long (QueryInterrupted), like `interrupt()`; without it, it is not timed."""
        with self._lock:
            if timeout_s is None:
                try:
                    return self._reader().execute(sql).fetchall()
                except duckdb.Error as exc:
                    raise QueryError(compact_error(exc, sql), sql) from exc
            with operation(self, timeout_s), interruptible(self, sql):
                check_stopped(self, sql)
                try:
                    return self._reader().execute(sql).fetchall()
                except duckdb.InterruptException:
                    raise
                except duckdb.Error as exc:
                    raise QueryError(compact_error(exc, sql), sql) from exc

    # ----------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the connections and remove the catalog's temporary folder. An operation still
        running in another thread (one Ctrl-C gave up waiting for) is interrupted, and the folder
        is removed without waiting for it."""
        if not self._lock.acquire(timeout=CLOSE_WAIT_S):
            self.interrupt()
            self._finalizer()
            writing = self._writing
            if writing is not None:
                writing.abort()
            return
        try:
            self._close_read_only()
            self._finalizer()
        finally:
            self._lock.release()
        with self._state:
            stoppers = list(self._stoppers)
        for stopper in stoppers:
            stopper.join(CLOSE_WAIT_S)

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _own_derived(path: Path, context: Path, reg: Registration) -> list[Path]:
    """derived/ of a task folder when the program made it (a scratch folder `prepare` marked); one
    shipped with an input task is ignored with a note: its manifest could name any file."""
    derived = ScratchLayout(path).derived
    if context == path or not os.path.lexists(derived):
        return []
    if read_prepared_record(path) is None:
        reg.notes.append((DERIVED, "not read: this derived/ came with the input (datasolver writes one "
                                   "only in a folder `prepare` made); its tables are ignored"))
        return []
    return [derived]


# The listings of tables by name (not information_schema, which marks an alias as a VIEW).


