"""The `column_home` hint: a model took a column from the wrong table of a join (`c.amount` where
`amount` is in orders); DuckDB says only that the table it looked in has no such column. The hint
names the tables that have it. Its bound: how many tables it names."""

from __future__ import annotations

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.protocol import Schema

HOMES_SHOWN = 4  # tables named as holding a column the query looked for elsewhere


def column_home(error: DuckError, sql: str, schema: Schema) -> str:
    """For a column DuckDB did not find where the query looked: the tables that have it (known
    without loading), so a query that took the column from the wrong table of a join says where
    it is. "" when none has it or the error is another."""
    name = error.missing_column
    if name is None:
        return ""
    homes = [n for n in schema.names()
             if any(c.casefold() == name.casefold() for c in schema.column_names(n, load=False) or [])]
    if not homes:
        return ""
    more = f" and {len(homes) - HOMES_SHOWN} more" if len(homes) > HOMES_SHOWN else ""
    # The missing name is said again: after DuckDB's "Candidate bindings", "a column of that name"
    # was read by the real 1.5B model as the candidate's home, and it moved the candidate there.
    return f" (the column \"{name}\" is in table {', '.join(homes[:HOMES_SHOWN])}{more}, not where the query looked)"
