"""The `text_values` rule of the on-reject stage: a model wrote a text value in double quotes
(`"项目名称" = "华润置地未来城市"`, `city IN ("Paris", "Rome")`), as MySQL reads it; DuckDB reads a
name and finds no such column. Where nothing else can be meant, the value is written as a string
literal. It reads the query as `spaced_columns` leaves it. `compared_column` (what a value is
compared with) serves the `quoted_value` hint too. Its bound: the query text it reads."""

from __future__ import annotations

from collections.abc import Iterable

from datasolver.data.rules.bracket_names import KEYWORDS, quote_brackets_and_backticks
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.rules.spaced_columns import fix_whitespace_columns, squash_whitespace
from datasolver.data.sql_tokens import Token, significant, tokenize, unquote

MAX_SQL_CHARS = 1_000_000  # of a rejected query the rule reads (about 2 s of token walk; a longer one is left as it is)


def text_values(sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]:
    """`sql` as `spaced_columns` leaves it, with its double-quoted values written as string literals
    (`quote_text_values`); none when it has none. The text columns are read only for a query with a
    double-quoted name."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    quoted, notes = quote_brackets_and_backticks(sql)
    if not any(t.kind == "ident" for t in tokenize(quoted)):
        return []
    fixed, more = fix_whitespace_columns(quoted, columns)
    valued, values = quote_text_values(fixed, columns, columns.text())
    return [(valued, notes + more + values)] if values else []


_COMPARISONS = frozenset({"=", "==", "!=", "<>", "like", "ilike", "not like", "not ilike"})


def quote_text_values(sql: str, columns: Iterable[str], text_columns: Iterable[str]) -> tuple[str, list[str]]:
    """Rewrite each double-quoted name that is a value, not a name, as a string literal.

    Only where nothing else can be meant: the name is no column (case and whitespace aside) and no
    alias the query defines, it is not qualified (`t."x"`) and it is compared (`=`, `<>`, `!=`,
    LIKE, ILIKE, an IN list) with a column that is text. A query where the double-quoted name
    is a column is never changed."""
    tokens = tokenize(sql)
    if not any(t.kind == "ident" for t in tokens):
        return sql, []
    sig = significant(tokens)
    known = {squash_whitespace(c).casefold() for c in columns}
    text = {squash_whitespace(c).casefold() for c in text_columns}
    aliases = {squash_whitespace(unquote(sig[k])).casefold() for k in range(1, len(sig))
               if sig[k].kind == "ident" and sig[k - 1].text.lower() == "as"}
    values: set[int] = set()
    for k, tok in enumerate(sig):
        if tok.kind != "ident":
            continue
        key = squash_whitespace(unquote(tok)).casefold()
        if key in known or key in aliases or _qualified(sig, k):
            continue
        other = compared_column(sig, k)
        if other is not None and squash_whitespace(other).casefold() in text:
            values.add(tok.start)
    if not values:
        return sql, []
    out, notes = [], []
    for tok in tokens:
        if tok.start in values:
            literal = "'" + unquote(tok).replace("'", "''") + "'"
            out.append(literal)
            notes.append(f"{tok.text} → {literal} (a text value: no column has that name)")
        else:
            out.append(tok.text)
    return "".join(out), notes


def _qualified(sig: list[Token], k: int) -> bool:
    return (k > 0 and sig[k - 1].text == ".") or (k + 1 < len(sig) and sig[k + 1].text == ".")


def _column_at(sig: list[Token], k: int) -> str | None:
    """The column named by the token at k (the last part of `t.col`), None when it is no name."""
    if not 0 <= k < len(sig):
        return None
    tok = sig[k]
    if tok.kind == "ident" or tok.kind == "backtick":
        return unquote(tok)
    if tok.kind == "word" and tok.text.lower() not in KEYWORDS:
        return tok.text
    return None


def _comparison_at(sig: list[Token], start: int, end: int) -> bool:
    """Whether sig[start:end] spells a comparison: `=`, `<>`, `!=` (adjacent symbols), LIKE, NOT ILIKE …"""
    if start < 0 or end > len(sig) or start >= end:
        return False
    parts = sig[start:end]
    if parts[0].kind == "op":
        if any(p.kind != "op" or p.end != q.start for p, q in zip(parts, parts[1:])):
            return False
        return "".join(p.text for p in parts) in _COMPARISONS
    return " ".join(p.text.lower() for p in parts) in _COMPARISONS


def compared_column(sig: list[Token], k: int) -> str | None:
    """The column the value at sig[k] is compared with: `col = v`, `v = col`, `col [NOT] IN (…, v, …)`."""
    for size in (2, 1):
        if _comparison_at(sig, k - size, k) and (column := _column_at(sig, k - size - 1)) is not None:
            return column
    for size in (2, 1):
        after = k + 1 + size
        if _comparison_at(sig, k + 1, after) and (column := _column_at(sig, after)) is not None \
                and not (after + 1 < len(sig) and sig[after + 1].text in (".", "(")):
            return column
    j = k - 1
    while j >= 0 and (sig[j].kind in ("ident", "string", "number") or sig[j].text == ","):
        j -= 1
    if j >= 1 and sig[j].text == "(" and sig[j - 1].text.lower() == "in":
        return _column_at(sig, j - 2 - (1 if j >= 2 and sig[j - 2].text.lower() == "not" else 0))
    return None
