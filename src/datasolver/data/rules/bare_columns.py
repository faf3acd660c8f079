"""The `bare_columns` rule of the on-reject stage: a model wrote a column name bare although it needs
quotes (`时间(月份)` reads as a call of 时间, `建筑密度(%)` as an operator), as the schema shows it;
double-quoted, the query runs. Also for the column `时间（月份）` typed with ASCII parentheses when no
column is spelled so. It reads the query with its bracketed names quoted first (`bracket_names`).
Its bound: the query text it reads."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from datasolver.data.names import quote_ident
from datasolver.data.rules.bracket_names import quote_brackets_and_backticks
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.sql_tokens import tokenize

MAX_SQL_CHARS = 1_000_000  # of a rejected query the rule reads (about 2 s of token walk; a longer one is left as it is)
_NEEDS_QUOTES = re.compile(r"[^\w]")


def bare_columns(sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]:
    """`sql`, its bracketed names quoted, with its bare column names that need quotes double-quoted
    (`quote_bare_columns`); none when it has no such name."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    quoted, notes = quote_brackets_and_backticks(sql)
    bare, more = quote_bare_columns(quoted, columns)
    return [(bare, notes + more)] if more else []


def quote_bare_columns(sql: str, columns: Iterable[str]) -> tuple[str, list[str]]:
    """Double-quote each column name written bare although it holds characters a bare name
    cannot (``时间(月份)`` reads as a call of 时间, ``建筑密度(%)`` as an operator): a small model
    writes them as the schema shows them. Only names with such characters, only outside strings,
    comments and quoted names, and never inside a longer word."""
    real = set(columns)
    # A name as written → the column: itself, or its NFKC form (the schema's full-width
    # `时间（月份）` typed with ASCII parentheses) when no column is spelled that way.
    spelled: dict[str, str] = {}
    for column in sorted(real):
        if _NEEDS_QUOTES.search(column):
            spelled.setdefault(column, column)
            folded = unicodedata.normalize("NFKC", column)
            if folded not in real and _NEEDS_QUOTES.search(folded):
                spelled.setdefault(folded, column)
    if not spelled:
        return sql, []
    special = sorted(spelled, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w\"])(" + "|".join(map(re.escape, special)) + r")(?![\w\"])")
    out: list[str] = []
    code: list[str] = []  # a run of tokens outside strings, comments and quoted names
    notes: list[str] = []

    def flush() -> None:
        text = "".join(code)
        for name in dict.fromkeys(pattern.findall(text)):
            notes.append(f"column {name} → {quote_ident(spelled[name])}")
        out.append(pattern.sub(lambda m: quote_ident(spelled[m.group(1)]), text))
        code.clear()

    for tok in tokenize(sql):
        if tok.kind in ("string", "comment", "ident", "backtick"):
            flush()
            out.append(tok.text)
        else:
            code.append(tok.text)
    flush()
    return "".join(out), notes

