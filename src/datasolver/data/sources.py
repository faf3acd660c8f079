"""Registration of context files as table sources: names decided now, rows read only on demand."""

from __future__ import annotations

import json
import os
import stat
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from datasolver.data import csv_source, json_source, sqlite_source, table_load, typed_files
from datasolver.data.arrow_columns import TextTable
from datasolver.data.errors import SourceSkipped
from datasolver.data.compressed import compression, decompress_to, format_suffix, table_stem
from datasolver.data.files import COMPRESSED_KINDS, KIND_BY_SUFFIX, TABLE_KINDS, ContextFiles, file_kind
from datasolver.data.input_limits import InputBudget, InputLimits
from datasolver.data.layout import DERIVED
from datasolver.data.load_notes import OTHER
from datasolver.data.names import unquoted_note
from datasolver.data.sqlite_source import Stop
from datasolver.data.table_load import LoadContext
from datasolver.data.title_lines import title_lines_note

DERIVED_MANIFEST = "manifest.json"

if TYPE_CHECKING:
    import pyarrow as pa



@dataclass
class Loaded:
    """What a source read in Python yields: its rows as Arrow, the text columns to type, notes."""

    table: pa.Table
    infer: list[str]
    problems: list[str] = field(default_factory=list)
    column_notes: list[tuple[str, str]] = field(default_factory=list)  # (kind, text) about its columns


Notes = list[tuple[str, str]]  # (kind, text), see load_notes


@dataclass
class Source:
    """One table-to-be: where it comes from and how to load it (not yet loaded)."""

    kind: str  # csv | json | db | parquet | excel | stats | arrow | derived
    path: Path
    relpath: str
    source_name: str
    load: Callable[[LoadContext], Notes]  # creates table `ctx.target` in `ctx.conn`; returns its notes
    columns: list[str] | None = None
    rows: int | None = None
    rows_exact: bool = False
    origin: str | None = None
    count_rows: Callable[[], int | None] | None = None  # cheap count before loading
    count_is_exact: bool = False
    scan: Callable[[duckdb.DuckDBPyConnection], str | None] | None = None
    """A relation over the file that DuckDB reads directly, typed, for a query before the table is
    loaded (None: the file must be loaded first)."""
    reads: tuple[Path, ...] = ()
    """Files DuckDB itself opens to load or scan this source (the loader may read only these)."""


def from_python(read: Callable[[Stop], Loaded]) -> Callable[[LoadContext], Notes]:
    """A load for a source read in Python: its Arrow rows, typed by the inference rules."""

    def load(ctx: LoadContext) -> Notes:
        loaded = read(ctx.stop)
        ctx.check_stopped()
        typing = table_load.load_arrow(ctx, loaded.table, loaded.infer)
        return [(OTHER, p) for p in loaded.problems] + loaded.column_notes + typing

    return load


@dataclass
class Registration:
    sources: list[Source] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (relpath, reason)
    notes: list[tuple[str, str]] = field(default_factory=list)


HIDDEN_NOTE = "not loaded: its name (or a folder's) starts with a dot, which marks it hidden"


def register_files(files: ContextFiles, reg: Registration, limits: InputLimits | None = None,
                   budget: InputBudget | None = None, encoding: str | None = None,
                   header_row: int | None = None) -> None:
    """csv → json → db → parquet → excel, each group in file-name order (the order decides name
    collisions). `encoding` (a codec name) is every CSV file's encoding instead of the one chosen
    by evidence. `header_row` (1-based) is every CSV file's and sheet's header line instead of
    the one found below title lines (`title_lines`).

    One bad file never stops the others: whatever goes wrong while registering it becomes a
    `skipped` entry with the reason. A file over `limits` (per file, or with the files accepted
    before it in this order, across files; `budget` carries that total on to derived tables) is
    skipped with a note before any of it is read. Files the walk refused (links out of the task,
    FIFOs, devices) are skipped with its reason, and so is every file of a kind no table is read
    from (not a document, video or knowledge.md either).
    """
    budget = budget or InputBudget(limits or InputLimits())
    reg.skipped.extend(files.refused)
    for path in files.hidden:
        if file_kind(path) in TABLE_KINDS:
            reg.notes.append((files.relative(path), HIDDEN_NOTE))
    for path in files.csv:
        _within(budget, path, files.relative(path), reg, _register_csv, path, files.relative(path), table_stem(path),
                reg, "csv", encoding, budget.limits.max_file_bytes, header_row)
    for path in files.json:
        _within(budget, path, files.relative(path), reg, _register_json, path, files.relative(path), reg,
                budget.limits.max_file_bytes)
    for path in files.db:
        _within(budget, path, files.relative(path), reg, _register_sqlite, path, files.relative(path), reg)
    for path in files.parquet:
        _within(budget, path, files.relative(path), reg, _register_parquet, path, files.relative(path), reg)
    for path in files.excel:
        _within(budget, path, files.relative(path), reg, _register_excel, path, files.relative(path), reg,
                header_row)
    for path in files.stats + files.arrow:
        _within(budget, path, files.relative(path), reg, _register_typed_file, path, files.relative(path), reg)
    for path in files.other:
        reg.skipped.append((files.relative(path), not_a_table_reason(path)))


def not_a_table_reason(path: Path) -> str:
    suffix = path.suffix.lower() or "(no extension)"
    inner = format_suffix(path)
    if compression(path) and KIND_BY_SUFFIX.get(inner) in TABLE_KINDS:
        kinds = sorted(s for s, kind in KIND_BY_SUFFIX.items() if kind in COMPRESSED_KINDS)
        return (f"not read: a compressed {inner} file is not read (compressed files are read for "
                f"{', '.join(kinds)} only); decompress it into the folder to read it")
    return (f"not read: {suffix} files are not a table format (tables are read from CSV/TSV, JSON, JSON Lines, "
            "SQLite, Parquet, Excel, Stata, SPSS, SAS, Feather and ORC files; documents from Markdown, text and PDF)")


def _within(budget: InputBudget, path: Path, relpath: str, reg: Registration,
            register: Callable[..., None], *args: object) -> None:
    """Register one file if its size fits the budget; its bytes count once it yields a table."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        reg.skipped.append((relpath, f"could not be read ({exc.strerror or exc})"))
        return
    if reason := budget.refusal(size):
        reg.skipped.append((relpath, reason))
        return
    before = len(reg.sources)
    _guarded(relpath, reg, register, *args)  # on failure it removes what the file registered
    if len(reg.sources) > before:
        budget.spend(size)


def _guarded(relpath: str, reg: Registration, register: Callable[..., None], *args: object) -> None:
    try:
        register(*args)
    except Exception as exc:  # noqa: BLE001 - any failure on one file is that file's note
        reg.sources = [s for s in reg.sources if s.relpath != relpath]
        reg.skipped.append((relpath, unreadable_reason(exc)))


def unreadable_reason(exc: BaseException) -> str:
    """One line saying why a file could not be read, whatever the parser raised."""
    if isinstance(exc, SourceSkipped):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "too large to read in the memory available"
    return f"could not be read ({type(exc).__name__}: {str(exc)[:200]})"


MAX_MANIFEST_BYTES = 16 << 20


def register_derived(derived_dir: Path, reg: Registration, label: str = DERIVED,
                     budget: InputBudget | None = None) -> None:
    """Tables extracted from documents: `derived/manifest.json` names each file's table and origin.

    The program wrote the folder, but a manifest is still only trusted to name its own files: an
    entry is the bare name of a regular file in `derived_dir` (no `/`, `..`, absolute path or
    link), and the files count against the same input caps as the context's (`budget`).
    """
    budget = budget or InputBudget(InputLimits())
    manifest = _read_regular(derived_dir / DERIVED_MANIFEST, MAX_MANIFEST_BYTES)
    if manifest is None:
        if os.path.lexists(derived_dir / DERIVED_MANIFEST):
            reg.skipped.append((f"{label}/{DERIVED_MANIFEST}", "unreadable manifest: not a regular file, "
                                f"or over {MAX_MANIFEST_BYTES >> 20} MB"))
        return
    try:
        entries = json.loads(manifest.decode("utf-8")).get("tables", [])
        if not isinstance(entries, list):
            raise AttributeError("'tables' is not a list")
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError, RecursionError) as exc:
        reg.skipped.append((f"{label}/{DERIVED_MANIFEST}", f"unreadable manifest: {str(exc)[:200]}"))
        return
    counted: set[str] = set()  # a SQLite file named by several entries counts once
    for entry in (e for e in entries if isinstance(e, dict)):
        name = str(entry.get("file", ""))
        relpath = f"{label}/{name}"[:300]
        if reason := _derived_refusal(derived_dir, name):
            reg.skipped.append((relpath, reason))
            continue
        path = derived_dir / name
        origin = " ".join(str(entry[k]) for k in ("source", "location") if entry.get(k)) or None
        before = len(reg.sources)
        if path.suffix.lower() == ".csv":
            register: Callable[..., None] = _register_csv
            args: tuple = (path, relpath, str(entry.get("table") or path.stem), reg, DERIVED)
        elif path.suffix.lower() in (".db", ".sqlite", ".sqlite3"):
            register, args = _register_sqlite, (path, relpath, reg, DERIVED, entry.get("table"))
        else:
            reg.skipped.append((relpath, "derived table file must be .csv or SQLite"))
            continue
        if name in counted:
            _guarded(relpath, reg, register, *args)
        else:
            _within(budget, path, relpath, reg, register, *args)
            counted.add(name)
        for source in reg.sources[before:]:
            source.origin = origin


def _derived_refusal(derived_dir: Path, name: str) -> str | None:
    """Why a manifest's `file` may not be read: only bare names of regular files inside derived/."""
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        return "not read: a manifest entry must be the bare name of a file in derived/"
    try:
        mode = os.lstat(derived_dir / name).st_mode
    except OSError as exc:
        return f"could not be read ({exc.strerror or exc})"
    if not stat.S_ISREG(mode):
        return "not read: a derived table file must be a regular file (not a link, FIFO or folder)"
    return None


def _read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes (None when absent, a link, a FIFO or over `limit`); never blocks."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)
    finally:
        os.close(fd)


def _register_csv(path: Path, relpath: str, source_name: str, reg: Registration, kind: str = "csv",
                  encoding: str | None = None, cap: int | None = None, header_row: int | None = None) -> None:
    try:
        head = csv_source.read_csv_header(path, encoding, header_row)
    except (SourceSkipped, OSError) as exc:
        reg.skipped.append((relpath, str(exc)))
        return
    if head.skip and header_row is None:
        reg.notes.append((relpath, title_lines_note(head.skip, head.above)))
    if head.quoted:
        reg.notes.append((relpath, unquoted_note(head.quoted)))
    if compression(path):  # decompressed into the catalog's scratch (within `cap`) when it loads
        def load_copy(ctx: LoadContext) -> Notes:
            copy = ctx.scratch / f"decompressed-{uuid.uuid4().hex}{format_suffix(path)}"
            try:
                decompress_to(path, copy, cap or InputLimits().max_file_bytes, ctx.stop)
                return table_load.load_csv(ctx, copy, head, encoding)
            finally:
                copy.unlink(missing_ok=True)

        reg.sources.append(Source(kind, path, relpath, source_name, load_copy, columns=head.names))
        return

    def load(ctx: LoadContext) -> Notes:
        return table_load.load_csv(ctx, path, head, encoding)

    def scan(conn: duckdb.DuckDBPyConnection) -> str | None:
        return table_load.csv_scan(conn, path, head, encoding)

    source = Source(kind, path, relpath, source_name, load, columns=head.names, scan=scan, reads=(path,))
    source.count_rows = lambda: _estimate_lines(path) - 1 - head.skip
    reg.sources.append(source)


def _register_parquet(path: Path, relpath: str, reg: Registration) -> None:
    columns, rows = table_load.parquet_shape(path)
    source = Source("parquet", path, relpath, path.stem, lambda ctx: table_load.load_parquet(ctx, path),
                    columns=columns, rows=rows, rows_exact=True, scan=lambda conn: table_load.parquet_scan(conn, path),
                    reads=(path,))
    reg.sources.append(source)


def _register_excel(path: Path, relpath: str, reg: Registration, header_row: int | None = None) -> None:
    from datasolver.data import excel_source  # the reader loads only for a folder with a workbook

    sheets = excel_source.sheet_names(path)
    if not sheets:
        reg.notes.append((relpath, "the workbook has no sheets"))
    for sheet in sheets:
        name = path.stem if len(sheets) == 1 else f"{path.stem}_{sheet}"

        def read(stop: Stop, sheet: str = sheet) -> Loaded:
            text = excel_source.read_sheet(path, sheet, header_row)
            return Loaded(text.table, text.infer, text.notes)

        reg.sources.append(Source("excel", path, relpath, name, from_python(read)))


def _register_typed_file(path: Path, relpath: str, reg: Registration) -> None:
    """A Stata, SAS, SPSS, Feather or ORC file: one table, its columns typed as the file types them
    (an SPSS or SAS file's shape read from its header first, and bounded: `typed_files.readstat_shape`)."""

    def read(stop: Stop) -> Loaded:
        table, notes = typed_files.read_typed_file(path)
        return Loaded(table, [], notes)

    columns, rows = None, None
    if path.suffix.lower() in typed_files.READSTAT_SUFFIXES:
        columns, rows = typed_files.readstat_shape(path)
    reg.sources.append(Source(KIND_BY_SUFFIX[path.suffix.lower()], path, relpath, path.stem, from_python(read),
                              columns=columns, rows=rows, rows_exact=rows is not None))


def _estimate_lines(path: Path) -> int:
    count, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def _register_json(path: Path, relpath: str, reg: Registration, cap: int | None = None) -> None:
    cap = cap or InputLimits().max_file_bytes
    try:
        name = json_source.peek_single_table_name(path)
    except OSError as exc:
        reg.skipped.append((relpath, str(exc)))
        return
    if name is not None:
        def read_single(stop: Stop) -> Loaded:
            parsed = json_source.read_json_tables(path, cap)
            if len(parsed.tables) != 1:
                raise SourceSkipped(f"expected one table, found {len(parsed.tables)}")
            text = parsed.tables[0].to_table()
            return Loaded(text.table, text.infer, parsed.notes, text.notes)

        source = Source("json", path, relpath, name, from_python(read_single))
        shape = json_source.peek_shape(path)
        if shape is not None:
            source.columns = shape.columns
            source.count_rows = lambda: shape.rows
            source.count_is_exact = shape.exact
        reg.sources.append(source)
        return
    try:
        parsed = json_source.read_json_tables(path, cap)
    except (SourceSkipped, OSError) as exc:
        reg.skipped.append((relpath, str(exc)))
        return
    for note in parsed.notes:
        reg.notes.append((relpath, note))
    for table in parsed.tables:
        reg.sources.append(_json_table_source(path, relpath, table))


def _json_table_source(path: Path, relpath: str, table: json_source.JsonTable) -> Source:
    def read(stop: Stop) -> Loaded:
        text: TextTable = table.to_table()
        return Loaded(text.table, text.infer, column_notes=text.notes)

    columns = list(dict.fromkeys(k for record in table.records for k in record))
    return Source("json", path, relpath, table.source_name, from_python(read), columns=columns,
                  rows=len(table.records), rows_exact=True)


def _register_sqlite(path: Path, relpath: str, reg: Registration, kind: str = "db", only: str | None = None) -> None:
    try:
        objects = sqlite_source.list_objects(path)
    except (SourceSkipped, OSError) as exc:
        reg.skipped.append((relpath, str(exc)))
        return
    if not objects:
        reg.notes.append((relpath, "SQLite database holds no tables"))
    for obj in objects:
        if only and obj.name != only:
            continue
        reg.sources.append(_sqlite_source(path, relpath, obj, kind))


def _sqlite_source(path: Path, relpath: str, obj: sqlite_source.SqliteObject, kind: str) -> Source:
    name = obj.name

    def read(stop: Stop) -> Loaded:
        text = sqlite_source.read_object(path, name, obj.kind, stop)
        return Loaded(text.table, text.infer)

    source = Source(kind, path, relpath, name, from_python(read), columns=obj.columns)
    source.count_rows = lambda: sqlite_source.count_rows(path, name)
    source.count_is_exact = True
    return source
