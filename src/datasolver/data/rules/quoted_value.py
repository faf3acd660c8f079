"""The `quoted_value` hint: a model wrote a text value in double quotes (`WHERE city = "Lyon"`), as
MySQL reads it; DuckDB reads a name there and says no such column exists. The hint says how a text
value is written. Its bound: the query text it reads."""

from __future__ import annotations

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.protocol import Schema
from datasolver.data.rules.text_values import compared_column
from datasolver.data.sql_tokens import significant, tokenize, unquote

MAX_SQL_CHARS = 20_000  # of a query the hint reads (a longer one gets no hint)


def quoted_value(error: DuckError, sql: str, schema: Schema) -> str:
    """A hint for DuckDB's "Referenced column "x" not found" when `"x"` is written double-quoted and
    compared with a column, as a value would be: double quotes make a name, a text value goes in
    single quotes. '' when it does not apply."""
    name = error.unqualified_column
    if name is None or len(sql) > MAX_SQL_CHARS:
        return ""
    sig = significant(tokenize(sql))
    if not any(t.kind == "ident" and unquote(t) == name and compared_column(sig, k) is not None
               for k, t in enumerate(sig)):
        return ""
    literal = "'" + name.replace("'", "''") + "'"
    return f" (hint: \"{name}\" in double quotes is a column name; a text value is written in single quotes: {literal})"
