"""A small SQL scanner: tokens that rebuild the input exactly, so rewrites never touch string
literals, quoted names or comments (the engine's rules in `rules/`, `ask.refs`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

@dataclass(frozen=True, slots=True)
class Token:
    """One lexical unit of SQL; concatenating every token's text rebuilds the input."""

    kind: str  # ws, comment, string, ident ("…"), backtick (`…`), word, number, op
    text: str
    start: int
    end: int


_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def tokenize(sql: str) -> list[Token]:
    """Split SQL into tokens, respecting '…' strings ('' and E'\\' escapes), $$ strings,
    "…" and `…` identifiers, and -- / nested /* */ comments. Never fails: an unterminated
    literal simply runs to the end of the text."""
    tokens: list[Token] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        start = i
        if ch.isspace():
            while i < n and sql[i].isspace():
                i += 1
            kind = "ws"
        elif sql.startswith("--", i):
            nl = sql.find("\n", i)
            i = n if nl < 0 else nl
            kind = "comment"
        elif sql.startswith("/*", i):
            i, kind = _skip_block_comment(sql, i), "comment"
        elif ch == "'" or (ch in "eE" and sql.startswith("'", i + 1)):
            backslash = ch != "'"
            i = _skip_quoted(sql, i + (2 if backslash else 1), "'", backslash)
            kind = "string"
        elif ch == "$" and (m := _DOLLAR_TAG.match(sql, i)):
            close = sql.find(m.group(0), m.end())
            i = n if close < 0 else close + len(m.group(0))
            kind = "string"
        elif ch == '"':
            i, kind = _skip_quoted(sql, i + 1, '"', False), "ident"
        elif ch == "`":
            i, kind = _skip_quoted(sql, i + 1, "`", False), "backtick"
        elif ch.isdigit() or (ch == "." and i + 1 < n and sql[i + 1].isdigit()):
            while i < n and (sql[i].isalnum() or sql[i] in "._"):
                i += 1
            kind = "number"
        elif ch.isalpha() or ch == "_":
            while i < n and (sql[i].isalnum() or sql[i] in "_$"):
                i += 1
            kind = "word"
        else:
            i, kind = i + 1, "op"
        tokens.append(Token(kind, sql[start:i], start, i))
    return tokens


def _skip_quoted(sql: str, i: int, quote: str, backslash: bool) -> int:
    """Index just past the closing quote; a doubled quote is an escaped quote."""
    n = len(sql)
    while i < n:
        ch = sql[i]
        if backslash and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if sql.startswith(quote, i + 1):
                i += 2
                continue
            return i + 1
        i += 1
    return n


def _skip_block_comment(sql: str, i: int) -> int:
    """Index just past a /* */ comment; DuckDB (like Postgres) allows nesting."""
    depth, i, n = 0, i, len(sql)
    while i < n:
        if sql.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif sql.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return n


def significant(tokens: list[Token]) -> list[Token]:
    """Tokens without whitespace and comments."""
    return [t for t in tokens if t.kind not in ("ws", "comment")]


def unquote(token: Token) -> str:
    """Name inside a "…" or `…` identifier token."""
    q = token.text[0]
    body = token.text[1:-1] if len(token.text) > 1 and token.text.endswith(q) else token.text[1:]
    return body.replace(q + q, q)
