"""A query over the catalog that has not run yet, like DuckDB's own relations.

`Catalog.sql(query)` returns one; nothing runs until an output method is called (`fetch`, `df`,
`to_csv`). Each output runs the guarded, repaired query once on the catalog's read-only connection;
afterwards `rewrites` says which repairs were applied and `final_sql` what ran. Failures are the
engine's named errors (QueryError, ReadOnlyViolation, UnknownTable), never raw DuckDB errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

import duckdb

from datasolver.data.errors import CellTooLarge
from datasolver.data.load_notes import LoadNote
from datasolver.data.names import quote_ident
from datasolver.data.results import QueryResult
from datasolver.sizes import human_size

if TYPE_CHECKING:
    import pandas as pd

    from datasolver.data.sql_repair import RepairOutcome

T = TypeVar("T")
# A fetched cell becomes a Python value in the parent process: one `repeat('x', 1e9)` took it past
# 3.5 GB. Cells of the first rows are measured in DuckDB first and refused over these sizes.
MAX_CELL_BYTES = 1 << 20
MAX_CELL_ITEMS = 100_000  # elements of a LIST/ARRAY or MAP cell
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

    def to_csv(self, path: Path | str) -> pd.DataFrame:
        """Write the whole result to `path` (UTF-8, header, no index) and return it, so a caller
        that also shows rows does not run the query twice."""
        frame = self.df()
        frame.to_csv(path, index=False, encoding="utf-8")
        return frame

    def _output(self, fetch: Callable[[duckdb.DuckDBPyRelation], T]) -> T:
        outcome = self._run(self.sql, fetch)
        self.rewrites, self.final_sql = list(outcome.rewrites), outcome.sql
        return outcome.value

    def __repr__(self) -> str:
        return f"Relation({self.sql!r})"


def _first_rows(rel: duckdb.DuckDBPyRelation, limit: int) -> QueryResult:
    columns = list(rel.columns)
    types = [str(t) for t in rel.types]
    total = rel.aggregate("count(*)").fetchall()[0][0]
    rows = _guarded_rows(rel.limit(limit), columns, types) if limit > 0 else []
    return QueryResult(columns=columns, types=types, rows=rows, total_rows=total)


def _size_of(ref: str, type_name: str) -> tuple[str, int, str] | None:
    """(SQL measuring a cell, its cap, the unit) for a type whose cells can be of any size."""
    upper = type_name.upper()
    if upper.startswith(("VARCHAR", "JSON")):
        return f"strlen({ref})", MAX_CELL_BYTES, "bytes"
    if upper in ("BLOB", "BIT"):
        return f"octet_length({ref})", MAX_CELL_BYTES, "bytes"
    if upper.endswith("]"):
        return f"len({ref})", MAX_CELL_ITEMS, "items"
    if upper.startswith("MAP("):
        return f"cardinality({ref})", MAX_CELL_ITEMS, "items"
    return None  # fixed-size types; a STRUCT or UNION is not measured


def _guarded_rows(head: duckdb.DuckDBPyRelation, columns: list[str], types: list[str]) -> list[tuple]:
    """The rows of `head`; a cell over its cap is replaced in DuckDB (so it is never fetched) and
    the fetch is refused with a CellTooLarge that names the column and its size."""
    sized = {i: s for i, t in enumerate(types) if (s := _size_of(f"#{i + 1}", t)) is not None}
    if not sized:
        return head.fetchall()
    exprs = []
    for i, name in enumerate(columns):
        ref = f"#{i + 1}"
        value = ref if i not in sized else f"CASE WHEN {sized[i][0]} > {sized[i][1]} THEN NULL ELSE {ref} END"
        exprs.append(f"{value} AS {quote_ident(name)}")
    exprs += [f"{expr} AS {quote_ident(f'__datasolver_size_{i}')}" for i, (expr, _, _) in sized.items()]
    fetched = head.project(", ".join(exprs)).fetchall()
    width = len(columns)
    for offset, (i, (_, cap, unit)) in enumerate(sized.items()):
        largest = max((row[width + offset] or 0 for row in fetched), default=0)
        if largest > cap:
            size = human_size(largest) if unit == "bytes" else f"{largest:,} items"
            cap_text = human_size(cap) if unit == "bytes" else f"{cap:,} items"
            raise CellTooLarge(f"column {columns[i]!r} has a cell of {size}, over the {cap_text} a result cell may "
                               "have; select a part of it (left(col, 1000), strlen(col), a count) instead")
    return [row[:width] for row in fetched]


def _missing(value: object) -> bool:
    import pandas as pd  # only results written through a DataFrame need it (start-up: ~0.3 CPU-s)

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array cell: not a missing value
        return False


def preview(frame: pd.DataFrame, limit: int, rewrites: list[str], sql: str) -> QueryResult:
    """A QueryResult of a fetched DataFrame's first rows (for showing what was written)."""
    head = frame.head(max(limit, 0))
    rows = [tuple(None if _missing(v) else v for v in row) for row in head.itertuples(index=False, name=None)]
    return QueryResult(columns=[str(c) for c in frame.columns], types=[str(t) for t in frame.dtypes], rows=rows,
                       total_rows=len(frame), rewrites=list(rewrites), sql=sql)
