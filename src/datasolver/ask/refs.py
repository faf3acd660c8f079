"""Result references as the model writes them (`@3`, `latest`) and their substitution into SQL.

The model never sees a result's real view name, so it cannot type one; whatever it invents is
either a reference that must name a stored result, or a table name the catalog must know. SQL
that spells the reserved view prefix is refused before it reaches DuckDB.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from datasolver.ask.errors import ReservedName
from datasolver.data.sql_tokens import tokenize

RESERVED_PREFIX = "_ask_"
LATEST_WORDS = frozenset({"latest", "last"})
# `@3`, `#3`, `3`, `latest`, `@latest` (case-insensitive, surrounding blanks allowed).
_REF_TEXT = re.compile(r"^\s*[@#]?\s*(\d+|latest|last)\s*$", re.IGNORECASE)


def parse_ref(value: object) -> int | str | None:
    """An index (int) or "latest" when `value` is a result reference; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        return None
    match = _REF_TEXT.match(value)
    if not match:
        return None
    word = match.group(1).lower()
    return "latest" if word in LATEST_WORDS else int(word)


def check_no_reserved(text: str) -> None:
    """Raise ReservedName when `text` spells an internal result-view name anywhere."""
    if RESERVED_PREFIX in text.lower():
        raise ReservedName(
            "internal result names cannot be used: refer to a stored result as @N (the number shown "
            "with it) or @latest"
        )


def substitute_refs(sql: str, resolve: Callable[[int | str], str]) -> tuple[str, list[str]]:
    """Replace each `@N` / `@latest` outside strings and quoted names with `resolve(ref)`.

    Returns the new SQL and the references met, in order (as written: "@2", "@latest").
    `resolve` raises UnknownResult for a reference that names no result.
    """
    check_no_reserved(sql)
    tokens = tokenize(sql)
    out: list[str] = []
    found: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.kind == "op" and tok.text == "@" and nxt is not None and nxt.start == tok.end:
            ref = parse_ref(nxt.text) if nxt.kind in ("number", "word") else None
            if ref is not None:
                out.append(resolve(ref))
                found.append("@" + nxt.text.lower())
                i += 2
                continue
        out.append(tok.text)
        i += 1
    return "".join(out), found
