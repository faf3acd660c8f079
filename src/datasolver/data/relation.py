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
import pandas as pd

from datasolver.data.results import QueryResult

if TYPE_CHECKING:
    from datasolver.data.sql_repair import RepairOutcome

T = TypeVar("T")
Runner = Callable[[str, Callable[[duckdb.DuckDBPyRelation], T]], "RepairOutcome[T]"]


class Relation:
    """One read-only SQL query over a catalog, run when an output is asked for."""

    def __init__(self, run: Runner, sql: str) -> None:
        self._run = run
        self.sql = sql
        self.rewrites: list[str] = []
        """Repairs applied the last time it ran (empty before it has run)."""
        self.final_sql: str | None = None
        """The SQL that actually ran the last time (None before it has run)."""

    def fetch(self, limit: int = 50) -> QueryResult:
        """The first `limit` rows, the column names and types, and the total row count."""
        result = self._output(lambda rel: _first_rows(rel, limit))
        result.rewrites, result.sql = list(self.rewrites), self.final_sql or self.sql
        return result

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
    rows = rel.limit(limit).fetchall() if limit > 0 else []
    return QueryResult(columns=columns, types=types, rows=rows, total_rows=total)


def _missing(value: object) -> bool:
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
