"""A catalog's tables as listed (`table_info`: rows, columns and types, from metadata until a
table is loaded) and described (`describe_table`: its columns and a few rows, for `\\schema`)."""

from __future__ import annotations

from typing import Protocol

from datasolver.data.errors import QueryError
from datasolver.data.lazy_load import TableEntry, ensure_loaded, table_column_types
from datasolver.data.names import quote_ident
from datasolver.data.operations import interruptible, operation
from datasolver.data.query_run import Querying
from datasolver.data.results import TableInfo, render_describe


class Listed(Querying, Protocol):
    """What of a `Catalog` its listing reads (catalog.py's `Catalog.__init__` says each)."""

    def resolve(self, name: str) -> str: ...


def table_info(catalog: Listed, entry: TableEntry) -> TableInfo:
    """A table as listed: rows, columns and types as loaded, else from cheap metadata (counted
    once where the file's header does not say)."""
    source = entry.source
    rows, exact, columns, types = source.rows, source.rows_exact, source.columns, None
    if entry.loaded:
        if entry.shape is None:  # loaded by another catalog (see `Catalog.loaded_file`): read it once
            reader = catalog._reader()
            entry.shape = (reader.execute(f"SELECT count(*) FROM {quote_ident(entry.name)}").fetchall()[0][0],
                           table_column_types(reader, entry.name))
        rows, columns, exact = entry.shape[0], [c for c, _ in entry.shape[1]], True
        types = [t for _, t in entry.shape[1]]
    elif rows is None and source.count_rows is not None:
        rows, exact = source.count_rows(), source.count_is_exact
        source.rows, source.rows_exact = rows, exact
    return TableInfo(entry.name, source.kind, source.relpath, source.source_name, rows, columns,
                     list(entry.aliases), source.origin, entry.loaded, exact, types)


def describe_table(catalog: Listed, name: str, sample_rows: int, timeout_s: float | None) -> str:
    """`Catalog.describe`: columns with types, `sample_rows` rows and the row count, as text."""
    table = catalog.resolve(name)
    with catalog._lock, operation(catalog, timeout_s), interruptible(catalog):
        ensure_loaded(catalog, [table])
        if catalog._entries[table].error:
            raise QueryError(f"table {table} could not be loaded: {catalog._entries[table].error}")
        sample = catalog._reader().sql(f"SELECT * FROM {quote_ident(table)}").limit(sample_rows)
        rows = sample.fetchall()
        total = catalog._reader().execute(f"SELECT count(*) FROM {quote_ident(table)}").fetchall()[0][0]
        info = table_info(catalog, catalog._entries[table])
        cols = catalog._entries[table].shape[1]
    return render_describe(info, cols, rows, total)
