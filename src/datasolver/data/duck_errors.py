"""DuckDB errors → one short, actionable line for the model.

DuckDB messages are several lines: ``<Kind> Error: <what>``, hints (``Did you mean``,
``Candidate bindings``, long ``Candidate functions`` lists), then a ``LINE n: <sql>`` echo
with a ``^^^`` caret line. We keep the kind, the message and the hints, shorten long lists,
and turn the caret block into the token it points at.
"""

from __future__ import annotations

import re
import unicodedata

from datasolver.clip import clip

MAX_CHARS = 400
_LIST_KEEP = 3  # candidate functions kept from DuckDB's (often 8–20 line) list
_CONTEXT = 24  # characters of SQL shown either side of the offending token

_LINE = re.compile(r"^LINE (\d+): ?")
_CARETS = re.compile(r"^\s*\^+\s*$")


def compact_error(exc: BaseException, sql: str | None = None) -> str:
    """One line under ~400 characters: error kind, message, DuckDB's suggestions and where
    in the SQL it failed. ``sql`` only serves to point at the end of the statement when
    DuckDB says the input ended early."""
    lines = [ln.rstrip() for ln in str(exc).splitlines()]
    if not lines or not lines[0].strip():
        return type(exc).__name__
    if not re.match(r"^[A-Za-z ]+ Error: ", lines[0]):
        lines[0] = f"{type(exc).__name__}: {lines[0].strip()}"

    body: list[str] = []
    where = ""
    listed: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        m = _LINE.match(line)
        if m and k + 1 < len(lines) and _CARETS.match(lines[k + 1]):
            where = _locate(m.group(1), line[m.end() :], lines[k + 1], len(m.group(0)))
            k += 2
            continue
        if _CARETS.match(line):  # a caret under an echoed value: the value line was noise
            if body and len(body) > 1:
                body.pop()
        elif line.startswith("\t") and body and body[-1].endswith("functions:"):
            listed.append(line.strip())
        elif line.strip():
            _flush(body, listed)
            body.append(line.strip())
        k += 1
    _flush(body, listed)

    if not where and sql is not None and "end of input" in str(exc):
        tail = " ".join(sql.split())[-_CONTEXT * 2 :]
        where = f'(at the end: "…{tail}")'
    text = " ".join(body)
    if where:
        text = f"{clip(text, MAX_CHARS - len(where) - 1)} {where}"
    return clip(text, MAX_CHARS)


def _locate(line_no: str, echoed: str, carets: str, prefix: int) -> str:
    """'(line n: "…context…" at "token")' from DuckDB's echoed SQL line and caret line."""
    column = carets.index("^") - prefix
    if column < 0:
        return f"(line {line_no})"
    start = _char_index(echoed, column)
    token = echoed[start : _char_index(echoed, column + carets.count("^"))]
    left = echoed[max(0, start - _CONTEXT) : start]
    right = echoed[start + len(token) : start + len(token) + _CONTEXT]
    context = f"{'…' if start > _CONTEXT else ''}{left}{token}{right}{'…' if len(right) == _CONTEXT else ''}"
    return f'(line {line_no}: "{" ".join(context.split())}" at "{token.strip()}")'


def _char_index(text: str, column: int) -> int:
    """Index of the character at a display column: DuckDB places carets by terminal width,
    where CJK and full-width characters take two columns."""
    width = 0
    for i, ch in enumerate(text):
        if width >= column:
            return i
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return len(text)


def _flush(body: list[str], listed: list[str]) -> None:
    """Fold a tab-indented candidate list into the line that announced it."""
    if listed:
        more = f" (+{len(listed) - _LIST_KEEP} more)" if len(listed) > _LIST_KEEP else ""
        body[-1] = f"{body[-1]} {'; '.join(listed[:_LIST_KEEP])}{more}"
        listed.clear()

