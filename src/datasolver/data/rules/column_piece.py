"""The `column_piece` hint: a model split a column's name in two or half translated it (`GROUP 开发商`
for the column 集团开发商); DuckDB says only "syntax error at 开发商". The hint names the columns the
word is a piece of (`split_column`, which the on-error rule `whole_column_name` reads too). Its
bound: how many columns it names."""

from __future__ import annotations

import functools

import duckdb

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.protocol import Schema

PIECE_COLUMNS_SHOWN = 3  # column names offered for a word that is a piece of them


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
