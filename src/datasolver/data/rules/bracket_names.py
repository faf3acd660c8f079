"""The `bracket_names` rule of the on-reject stage: a model wrote T-SQL's `[name]` or MySQL's
`` `name` ``, which DuckDB reads as a list and a syntax error; written "name" the query runs. A
bracket that indexes something (`x[1]`) or holds what can only be a list is left alone.
Its bound: the query text it reads."""

from __future__ import annotations

import re

from datasolver.data.names import quote_ident
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.sql_tokens import Token, tokenize, unquote

MAX_SQL_CHARS = 1_000_000  # of a rejected query the rule reads (about 2 s of token walk; a longer one is left as it is)

# SQL's own words: after one, `[` starts a value (list literal or T-SQL identifier), never an index;
# and one is never a column's name (`text_values.compared_column`).
KEYWORDS = frozenset(
    """select from where join on and or not by as in is then else when case end distinct top
    having into values union all except intersect like ilike between using set with order
    group limit offset left right inner outer full cross natural lateral any some exists
    return asc desc nulls over partition qualify window filter""".split()
)
_NUMBER_ONLY = re.compile(r"^\s*[-+]?\d+(\.\d*)?\s*$")
_COMPREHENSION = re.compile(r"\bfor\b.*\bin\b", re.IGNORECASE | re.DOTALL)


def bracket_names(sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]:
    """`sql` with its bracketed and backticked names double-quoted (`quote_brackets_and_backticks`)."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    return [quote_brackets_and_backticks(sql)]


def quote_brackets_and_backticks(sql: str) -> tuple[str, list[str]]:
    """Rewrite T-SQL ``[ident]`` and MySQL backtick identifiers as DuckDB "ident".

    A bracket is left alone when it indexes something (``x[1]``, ``f(a)[2]``, ``"c"[1]``)
    or holds what can only be a list (numbers, commas, strings, slices, comprehensions).
    """
    tokens = tokenize(sql)
    out: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "backtick":
            name = unquote(tok)
            out.append(quote_ident(name))
            notes.append(f"`{name}` → {quote_ident(name)}")
        elif tok.text == "[" and (close := identifier_bracket_end(sql, tokens, i)) is not None:
            name = sql[tok.end : tokens[close].start]
            out.append(quote_ident(name))
            notes.append(f"[{name}] → {quote_ident(name)}")
            i = close
        else:
            out.append(tok.text)
        i += 1
    return "".join(out), notes


def identifier_bracket_end(sql: str, tokens: list[Token], i: int) -> int | None:
    """Index of the `]` closing a T-SQL identifier opened at tokens[i], else None."""
    close = next((j for j in range(i + 1, len(tokens)) if tokens[j].kind == "op" and tokens[j].text in ("[", "]")), None)
    if close is None or tokens[close].text != "]":
        return None  # unclosed or nested: a list expression, not a name
    inner = tokens[i + 1 : close]
    if any(t.kind in ("string", "ident", "backtick", "comment") for t in inner):
        return None
    body = sql[tokens[i].end : tokens[close].start]
    if not body.strip() or "," in body or ":" in body or "\n" in body:
        return None
    if _NUMBER_ONLY.match(body) or _COMPREHENSION.search(body):
        return None
    prev = next((t for t in reversed(tokens[:i]) if t.kind not in ("ws", "comment")), None)
    if prev is not None and prev.end == tokens[i].start and _indexable(prev):
        return None
    return close


def _indexable(tok: Token) -> bool:
    """Can a directly following `[` be a subscript of this token?"""
    if tok.kind in ("ident", "backtick", "string"):
        return True
    if tok.kind == "word":
        return tok.text.lower() not in KEYWORDS
    return tok.text in (")", "]")
