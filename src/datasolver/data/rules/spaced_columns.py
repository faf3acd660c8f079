"""The `spaced_columns` rule of the on-reject stage: a model double-quoted a column's name with its
whitespace changed (`"营业 总收入"` for 营业总收入, a full-width space, a zero-width one); the one real
column it equals once all whitespace is removed is put in its place, an ambiguous or unmatched name
is left alone. It reads the query with its bracketed names quoted first (`bracket_names`).
Its bound: the query text it reads."""

from __future__ import annotations

from collections.abc import Iterable

from datasolver.data.names import quote_ident
from datasolver.data.rules.bracket_names import quote_brackets_and_backticks
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.sql_tokens import tokenize, unquote

MAX_SQL_CHARS = 1_000_000  # of a rejected query the rule reads (about 2 s of token walk; a longer one is left as it is)
_INVISIBLE = {0x200B: None, 0xFEFF: None}  # zero-width space and BOM count as whitespace too


def squash_whitespace(name: str) -> str:
    """Name with every whitespace character removed (str.split covers U+3000 and NBSP)."""
    return "".join(name.translate(_INVISIBLE).split())


def spaced_columns(sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]:
    """`sql`, its bracketed names quoted, with its double-quoted names that match no column put as the
    column they equal without whitespace (`fix_whitespace_columns`)."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    quoted, notes = quote_brackets_and_backticks(sql)
    fixed, more = fix_whitespace_columns(quoted, columns)
    return [(fixed, notes + more)]


def fix_whitespace_columns(sql: str, columns: Iterable[str]) -> tuple[str, list[str]]:
    """Rewrite each double-quoted name that matches no column to the one real column it
    equals once all whitespace is removed; ambiguous or unmatched names stay as they are.
    Matching ignores case only because DuckDB identifiers do."""
    tokens = tokenize(sql)
    if not any(t.kind == "ident" for t in tokens):
        return sql, []
    real = sorted(set(columns))
    exact = {c.casefold() for c in real}
    by_key: dict[str, set[str]] = {}
    for col in real:
        by_key.setdefault(squash_whitespace(col).casefold(), set()).add(col)
    out: list[str] = []
    notes: list[str] = []
    for tok in tokens:
        if tok.kind == "ident":
            name = unquote(tok)
            hits = by_key.get(squash_whitespace(name).casefold(), set())
            if name.casefold() not in exact and len(hits) == 1:
                col = next(iter(hits))
                out.append(quote_ident(col))
                notes.append(f"column {quote_ident(name)} → {quote_ident(col)}")
                continue
        out.append(tok.text)
    return "".join(out), notes
