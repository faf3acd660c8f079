"""A query over the catalog that has not run yet, like DuckDB's own relations.

`Catalog.sql(query)` returns one; nothing runs until an output is asked for (`fetch`, `df`,
`to_csv`). Each output runs the guarded, repaired query once on the catalog's read-only connection;
afterwards `rewrites` says which repairs were applied and `final_sql` what ran. Failures are the
engine's named errors (QueryError, ReadOnlyViolation, UnknownTable), never raw DuckDB errors.

What `fetch` brings into the process is bounded in DuckDB before any value is fetched: each cell
(MAX_CELL_BYTES, MAX_CELL_ITEMS: over it, CellTooLarge) and the first rows together
(MAX_RESULT_BYTES: the rows stop before the one that would pass it, and the result says it was cut).
"""

from __future__ import annotations

import io
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Literal, TextIO, TypeVar

import duckdb

from datasolver import safe_write
from datasolver.data.csv_source import sql_literal
from datasolver.data.errors import CellTooLarge
from datasolver.data.load_notes import LoadNote
from datasolver.data.names import quote_ident
from datasolver.data.results import QueryResult, write_csv, write_tsv
from datasolver.sizes import human_size

if TYPE_CHECKING:
    import pandas as pd

    from datasolver.data.sql_repair import RepairOutcome

T = TypeVar("T")
# A fetched cell becomes a Python value in the parent process: one `repeat('x', 1e9)` took it past
# 3.5 GB. Cells of the first rows are measured in DuckDB first and refused over these sizes.
MAX_CELL_BYTES = 1 << 20
MAX_CELL_ITEMS = 100_000  # elements of a LIST/ARRAY or MAP cell
# The first rows together: 500 rows of four cells just under MAX_CELL_BYTES took the parent to 6.3 GB
# (each cell a Python string, then the fetch's copies). A row is measured in DuckDB (its text and
# BLOB bytes, nested values as text, FIXED_CELL_BYTES for any other cell), and the rows stop before
# the one that would bring the total past this.
MAX_RESULT_BYTES = 16 << 20
FIXED_CELL_BYTES = 8
EXPORT_BATCH_ROWS = 1024  # rows fetched at a time when a whole result is written out through Python
ARROW_BATCH_ROWS = 122_880  # rows of one Arrow batch when DuckDB writes a whole result (its row group)
COPY_CHUNK_BYTES = 1 << 20
# Types whose every value DuckDB's CSV writer writes as `results.sql_text` does.
_AS_SHOWN = re.compile(r"^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\)|VARCHAR|BOOLEAN|"
                       r"DATE|TIME|UUID)$")
Runner = Callable[[str, Callable[[duckdb.DuckDBPyRelation], T]], "RepairOutcome[T]"]


class Relation:
    """One read-only SQL query over a catalog, run when an output is asked for."""

    def __init__(self, run: Runner, sql: str, notes: Callable[[], list[LoadNote]] = list) -> None:
        self._run = run
        self._notes = notes
        self.sql = sql
        self.rewrites: list[str] = []
        """Repairs applied the last time it ran (empty before it has run)."""
        self.final_sql: str | None = None
        """The SQL that actually ran the last time (None before it has run)."""

    def fetch(self, limit: int = 50) -> QueryResult:
        """The first `limit` rows, the column names and types, and the total row count."""
        result = self._output(lambda rel: _first_rows(rel, limit))
        result.rewrites, result.sql = list(self.rewrites), self.final_sql or self.sql
        result.notes = self.load_notes()
        return result

    def load_notes(self) -> list[LoadNote]:
        """What loading said about the tables this query reads (encoding chosen, rows skipped,
        columns left as text, …): every caller shows them beside the rows."""
        return self._notes()

    def df(self) -> pd.DataFrame:
        """The whole result as a DataFrame."""
        return self._output(lambda rel: rel.df())

    def to_csv(self, target: Path | str | TextIO, preview_rows: int = 0, *, visible_controls: bool = False) -> QueryResult:
        """Write the whole result as CSV (the `csv` format of `results.format_result`: NULL an empty
        field, the empty text `""`, booleans true/false) to a path or an open text stream: `write`."""
        return self.write(target, "csv", preview_rows, visible_controls=visible_controls)

    def write(self, target: Path | str | TextIO, fmt: Literal["csv", "tsv"] = "csv", preview_rows: int = 0, *,
              visible_controls: bool = False) -> QueryResult:
        """Write the whole result as CSV or TSV (`results.format_result`'s formats) to a path or an
        open text stream, and return its first `preview_rows` rows with the true count, so a caller
        that also shows rows does not run the query twice.

        The rows are spooled to a private temporary file first, so a query that fails half-way (and
        is repaired and run again) never leaves half a result in `target`; a path is replaced in one
        step by a new file (`safe_write`), so a link standing there is replaced, never written
        through. A CSV whose every column DuckDB writes as `sql_text` does (numbers, text, dates,
        booleans; more than one column; values as they are) is written by DuckDB's own CSV writer
        from the result's Arrow batches (a 1.7 M-row result: seconds, not tens of seconds); any
        other result comes EXPORT_BATCH_ROWS rows at a time through Python."""
        spool = self._output(lambda rel: _spool(rel, fmt, preview_rows, visible_controls))
        with spool.file:
            spool.file.seek(0)
            if isinstance(target, (str, Path)):  # a new file renamed over the name: never through a link
                with safe_write.replacing(Path(target)) as out:
                    shutil.copyfileobj(spool.file, out, COPY_CHUNK_BYTES)
            elif getattr(target, "buffer", None) is not None:
                target.flush()
                shutil.copyfileobj(spool.file, target.buffer, COPY_CHUNK_BYTES)
                target.buffer.flush()
            else:
                shutil.copyfileobj(io.TextIOWrapper(spool.file, encoding="utf-8", newline=""), target)
        result = spool.result
        result.rewrites, result.sql = list(self.rewrites), self.final_sql or self.sql
        result.notes = self.load_notes()
        return result

    def _output(self, fetch: Callable[[duckdb.DuckDBPyRelation], T]) -> T:
        outcome = self._run(self.sql, fetch)
        self.rewrites, self.final_sql = list(outcome.rewrites), outcome.sql
        return outcome.value

    def __repr__(self) -> str:
        return f"Relation({self.sql!r})"


def _first_rows(rel: duckdb.DuckDBPyRelation, limit: int) -> QueryResult:
    """The first `limit` rows and the true count, in one run of the query where it has no more rows
    than that: `limit + 1` rows are fetched, and only a result with more is counted (a second run;
    over a table read straight from its file, a second parse of the file)."""
    limit = max(limit, 0)
    columns = list(rel.columns)
    types = [str(t) for t in rel.types]
    rows, seen, more = _guarded_rows(rel.limit(limit + 1), columns, types, limit)
    total = rel.aggregate("count(*)").fetchall()[0][0] if more else seen
    return QueryResult(columns=columns, types=types, rows=rows, total_rows=total,
                       byte_budget=MAX_RESULT_BYTES if len(rows) < seen else None)


def _size_of(ref: str, type_name: str) -> tuple[str, int, str] | None:
    """(SQL measuring a cell, its cap, the unit) for a type whose cells can be of any size."""
    upper = type_name.upper()
    if upper.endswith("]"):  # LIST or ARRAY of anything, VARCHAR[] included
        return f"len({ref})", MAX_CELL_ITEMS, "items"
    if upper.startswith("MAP("):
        return f"cardinality({ref})", MAX_CELL_ITEMS, "items"
    if upper.startswith(("VARCHAR", "JSON")):
        return f"strlen({ref})", MAX_CELL_BYTES, "bytes"
    if upper in ("BLOB", "BIT"):
        return f"octet_length({ref})", MAX_CELL_BYTES, "bytes"
    return None  # fixed-size types; a STRUCT or UNION is not measured


def _bytes_of(ref: str, type_name: str) -> str | None:
    """SQL for about how many bytes a cell brings into the process (for the result's budget); None
    for a fixed-size type (FIXED_CELL_BYTES)."""
    upper = type_name.upper()
    if upper.endswith("]") or upper.startswith(("MAP(", "STRUCT(", "UNION(")):  # VARCHAR[] too
        return f"coalesce(strlen(CAST({ref} AS VARCHAR)), 0)"
    if upper.startswith(("VARCHAR", "JSON")):
        return f"coalesce(strlen({ref}), 0)"
    if upper in ("BLOB", "BIT"):
        return f"coalesce(octet_length({ref}), 0)"
    return None


def _guarded_rows(head: duckdb.DuckDBPyRelation, columns: list[str], types: list[str],
                  shown: int) -> tuple[list[tuple], int, bool]:
    """The first `shown` rows of `head` within the byte budget, how many rows `head` had among its
    first `shown` (more than those returned when the budget cut them short), and whether it has
    more rows than `shown` (it may hold one more, only to tell). Measured in DuckDB before
    any value is fetched: a cell over its cap is replaced by NULL there and the fetch is refused
    with a CellTooLarge naming the column and its size; a row that would bring the rows' total
    past MAX_RESULT_BYTES has every cell replaced, and it and the rows after it are left out.

    The running total is a window over the rows in the order `head` gives them (a streaming window:
    DuckDB holds no more rows for it; the catalog's queries run on one thread, so that order is the
    order of the rows fetched)."""
    sized = {i: s for i, t in enumerate(types) if (s := _size_of(f"#{i + 1}", t)) is not None}
    measured = [b for i, t in enumerate(types) if (b := _bytes_of(f"#{i + 1}", t)) is not None]
    if not sized and not measured:
        fetched = head.fetchall()
        return fetched[:shown], min(len(fetched), shown), len(fetched) > shown
    width = len(columns)
    row_bytes = " + ".join(measured + [str(FIXED_CELL_BYTES * (width - len(measured)))])
    inner = [f"#{i + 1} AS {quote_ident(f'__datasolver_v{i}')}" for i in range(width)]
    inner += [f"{expr} AS {quote_ident(f'__datasolver_size_{i}')}" for i, (expr, _, _) in sized.items()]
    inner.append(f"{row_bytes} AS __datasolver_row")
    total = "sum(__datasolver_row) OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
    measuring = head.project(", ".join(inner)).project(f"*, {total} AS __datasolver_total")
    exprs = []
    for i, name in enumerate(columns):
        value = quote_ident(f"__datasolver_v{i}")
        drop = f"__datasolver_total > {MAX_RESULT_BYTES}"
        if i in sized:
            drop += f" OR {quote_ident(f'__datasolver_size_{i}')} > {sized[i][1]}"
        exprs.append(f"CASE WHEN {drop} THEN NULL ELSE {value} END AS {quote_ident(name)}")
    exprs += [quote_ident(f"__datasolver_size_{i}") for i in sized]
    exprs.append("__datasolver_total")
    fetched = measuring.project(", ".join(exprs)).fetchall()
    more = len(fetched) > shown
    fetched = fetched[:shown]
    for offset, (i, (_, cap, unit)) in enumerate(sized.items()):
        largest = max((row[width + offset] or 0 for row in fetched), default=0)
        if largest > cap:
            size = human_size(largest) if unit == "bytes" else f"{largest:,} items"
            cap_text = human_size(cap) if unit == "bytes" else f"{cap:,} items"
            raise CellTooLarge(f"column {columns[i]!r} has a cell of {size}, over the {cap_text} a result cell may "
                               "have; select a part of it (left(col, 1000), strlen(col), a count) instead")
    kept = [row[:width] for row in fetched if row[-1] <= MAX_RESULT_BYTES]
    return kept, len(fetched), more


def _spool(rel: duckdb.DuckDBPyRelation, fmt: str, preview_rows: int, visible_controls: bool) -> _Spool:
    """Every row of `rel` as CSV or TSV in a private temporary file (bytes, UTF-8), the first
    `preview_rows` rows kept (within MAX_RESULT_BYTES of text) and the rows counted."""
    columns, types = list(rel.columns), [str(t) for t in rel.types]
    if fmt == "csv" and not visible_controls and len(columns) > 1 and all(_duckdb_writes_as_shown(t) for t in types):
        return _spool_by_duckdb(rel, columns, types, preview_rows)
    preview: list[tuple] = []
    held = 0
    budget_cut = False

    def rows() -> Iterator[tuple]:
        nonlocal held, budget_cut
        for row in rel.iter_rows(EXPORT_BATCH_ROWS):  # the engine keeps the rows; Python holds a batch
            if len(preview) < preview_rows and not budget_cut:
                size = sum(len(v) if isinstance(v, (str, bytes)) else FIXED_CELL_BYTES for v in row)
                if held + size > MAX_RESULT_BYTES:
                    budget_cut = True
                else:
                    held += size
                    preview.append(row)
            yield row

    file = tempfile.TemporaryFile("w+b")
    try:
        text = io.TextIOWrapper(file, encoding="utf-8", newline="")
        if fmt == "csv":
            count = write_csv(text, columns, rows(), visible_controls=visible_controls)
        else:
            count = write_tsv(text, columns, rows())
        text.flush()
        text.detach()
    except BaseException:
        file.close()
        raise
    result = QueryResult(columns=columns, types=types, rows=preview, total_rows=count,
                         byte_budget=MAX_RESULT_BYTES if budget_cut else None)
    return _Spool(file, result)


def _duckdb_writes_as_shown(type_name: str) -> bool:
    """Whether DuckDB's CSV writer writes a value of this type as `results.sql_text` does (not a
    timestamp: DuckDB cuts a fraction's trailing zeros; not an interval, a BLOB or a nested value)."""
    return bool(_AS_SHOWN.match(type_name))


def _spool_by_duckdb(rel: duckdb.DuckDBPyRelation, columns: list[str], types: list[str],
                     preview_rows: int) -> _Spool:
    """`_spool` by DuckDB's CSV writer: the query's Arrow batches read by a private in-memory
    DuckDB (the catalog's connection may touch no file) that writes them into a private temporary
    folder. The first rows are kept as Arrow and turned into Python values by DuckDB, as `fetch`
    gives them."""
    import pyarrow as pa

    reader = rel.to_arrow_reader(ARROW_BATCH_ROWS)
    head: list[pa.RecordBatch] = []
    held = 0

    def batches() -> Iterator[pa.RecordBatch]:
        nonlocal held
        for batch in reader:
            if held < preview_rows:
                head.append(batch.slice(0, preview_rows - held))
                held += min(batch.num_rows, preview_rows - held)
            yield batch

    stream = pa.RecordBatchReader.from_batches(reader.schema, batches())
    with tempfile.TemporaryDirectory(prefix="datasolver-export-") as folder:
        out = Path(folder) / "result.csv"
        writer = duckdb.connect(":memory:")
        try:
            writer.register("result_batches", stream)
            names = ", ".join(f"{quote_ident(f'column{i}')} AS {quote_ident(c)}"
                              for i, c in enumerate(columns))
            count = writer.execute(
                f"COPY (SELECT {names} FROM (SELECT * FROM result_batches) AS r"
                f"({', '.join(quote_ident(f'column{i}') for i in range(len(columns)))})) "
                f"TO {sql_literal(str(out))} (FORMAT csv, HEADER true)").fetchall()[0][0]
            first = writer.from_arrow(pa.Table.from_batches(head, reader.schema)).fetchall() if head else []
        finally:
            writer.close()
        file = open(out, "rb")  # noqa: SIM115 - the caller closes it; the folder goes, the open file stays
    preview, size, budget_cut = [], 0, False
    for row in first:
        size += sum(len(v) if isinstance(v, (str, bytes)) else FIXED_CELL_BYTES for v in row)
        if size > MAX_RESULT_BYTES:
            budget_cut = True
            break
        preview.append(row)
    result = QueryResult(columns=columns, types=types, rows=preview, total_rows=count,
                         byte_budget=MAX_RESULT_BYTES if budget_cut else None)
    return _Spool(file, result)


@dataclass
class _Spool:
    """A whole result written as CSV to a temporary file, and its first rows."""

    file: BinaryIO
    result: QueryResult
