"""The hints the engine adds to a failed query's error: named passes over the parsed error.

A query error the engine raises (`Catalog.query`, `sql`, `explore_data`, solver.py in the sandbox,
`ask`, MCP) ends with these hints, each a named pass `(error, sql, schema) → text` in
`ENGINE_HINTS`, applied in order by `error_hints`. They sit in the engine, not in the rules room
above it (`datasolver.data.rules`, which lists them as its `HINTS` stage), because the engine's own
message carries them to every caller, solver.py included, which imports only `datasolver.data`.
Each states its bound: the SQL text it reads and how many names it shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Protocol

import duckdb

from datasolver.data.duck_errors import DuckError
from datasolver.data.sql_repair import compared_column
from datasolver.data.sql_tokens import significant, tokenize, unquote

MAX_SQL_CHARS = 20_000  # of a query a hint reads (a longer one gets no hint)
HOMES_SHOWN = 4  # tables named as holding a column the query looked for elsewhere
PIECE_COLUMNS_SHOWN = 3  # column names offered for a word that is a piece of them


class Schema(Protocol):
    """What a hint reads of a `datasolver.data.Catalog`: names and the columns known without loading."""

    def names(self) -> list[str]: ...
    def column_names(self, name: str, *, load: bool = True, timeout_s: float | None = None) -> list[str] | None: ...


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


def column_piece(error: DuckError, sql: str, schema: Schema) -> str:
    """For a syntax error at a piece of column names (`split_column`): those columns, named in a
    hint. "" when the error is another."""
    split = split_column(error, sql, schema)
    if split is None:
        return ""
    piece, holding = split
    shown = ", ".join(f'"{c}"' for c in holding[:PIECE_COLUMNS_SHOWN])
    more = f" and {len(holding) - PIECE_COLUMNS_SHOWN} more" if len(holding) > PIECE_COLUMNS_SHOWN else ""
    return (f' (hint: "{piece}" is part of the column name {shown}{more}; write a name whole, '
            "in double quotes when it has spaces or symbols)")


def split_column(error: DuckError, sql: str, schema: Schema) -> tuple[str, list[str]] | None:
    """For a syntax error at a word that is a piece of column names (a name split in two or half
    translated: the real 1.5B model wrote `GROUP 开发商` for 集团开发商, and repeated it after the
    bare syntax error): the word as the error quotes it and the columns holding it, of the tables
    the query names (of every table when it names none; known without loading). None when the
    word is a keyword, a whole column, or in none."""
    word = error.near
    if word is None:
        return None
    piece = word.casefold()
    if len(piece) < 2 or piece in _keywords():
        return None
    tables = schema.names()
    named = [n for n in tables if n.casefold() in sql.casefold()]
    columns = dict.fromkeys(c for n in named or tables for c in schema.column_names(n, load=False) or [])
    if any(c.casefold() == piece for c in columns):
        return None
    holding = [c for c in columns if piece in c.casefold()]
    return (word, holding) if holding else None


@functools.cache
def _keywords() -> frozenset[str]:
    """DuckDB's SQL keywords, case-folded: a syntax error at one is not a piece of a column name."""
    with duckdb.connect() as connection:
        return frozenset(row[0].casefold() for row in connection.execute("SELECT keyword_name FROM duckdb_keywords()").fetchall())


ErrorHint = Callable[[DuckError, str, Schema], str]
ENGINE_HINTS: tuple[ErrorHint, ...] = (quoted_value, column_home, column_piece)


def error_hints(error: DuckError, sql: str, schema: Schema) -> str:
    """The hints of `ENGINE_HINTS` for a failed query, in order, each starting with a space ("" when none)."""
    return "".join(hint(error, sql, schema) for hint in ENGINE_HINTS)
