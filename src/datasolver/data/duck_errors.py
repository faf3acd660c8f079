"""DuckDB errors: parsed once into a typed value (`parse_duck_error` → `DuckError`), and shown as one
short, actionable line for the model (`compact_error`). This is the one module that reads DuckDB's
message text; every other module takes the facts from a `DuckError`.

DuckDB messages are several lines: ``<Kind> Error: <what>``, hints (``Did you mean``,
``Candidate bindings``, long ``Candidate functions`` lists), then a ``LINE n: <sql>`` echo
with a ``^^^`` caret line. We keep the kind, the message and the hints, shorten long lists,
and turn the caret block into the token it points at.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from datasolver.clip import clip

MAX_CHARS = 400
_LIST_KEEP = 3  # candidate functions kept from DuckDB's (often 8–20 line) list
_CONTEXT = 24  # characters of SQL shown either side of the offending token

_LINE = re.compile(r"^LINE (\d+): ?")
_CARETS = re.compile(r"^\s*\^+\s*$")

MAX_PARSED_CHARS = 20_000  # of a message parsed (DuckDB's facts come first; a longer tail is an echo)
MAX_CANDIDATES = 50  # DuckDB's candidate bindings kept, in its order

_KIND = re.compile(r"\b([A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*) Error: ")  # "Binder Error: ", after "QueryError: " too
KIND_SEARCHED = 200  # characters at the message's start searched for its kind
_MISSING_TABLE = re.compile(r"Table with name (.+?) does not exist")
# A column DuckDB did not find: qualified by a table or alias (`T2.x`: 'Table "T2" does not have a column
# named "x"') or not ('Referenced column "x" not found').
_NOT_IN_TABLE = re.compile(r'Table "((?:[^"]|"")+)" does not have a column named "((?:[^"]|"")+)"')
_MISSING_COLUMN = re.compile(r'does not have a column named "((?:[^"]|"")+)"|Referenced column "((?:[^"]|"")+)" not found')
_NESTED_AGGREGATE = "aggregate function calls cannot be nested"
# A column read outside an aggregate of a grouped SELECT (or one with aggregates and no GROUP BY): in its SELECT
# list or ORDER BY ('... must be part of an aggregate function'), in its HAVING ('... or be used in an aggregate
# function'), DuckDB 2.0.1's wording of both.
_UNGROUPED = re.compile(r'column "((?:[^"]|"")+)" must appear in the GROUP BY clause or (?:must be part of|be used in) '
                        r'an aggregate function')
_SYNTAX_NEAR = re.compile(r'syntax error at or near "((?:[^"]|"")+)"')
_CANDIDATES = "Candidate bindings:"
_QUOTED = re.compile(r'\s*[:,]?\s*"((?:[^"]|"")+)"')
_ECHO = re.compile(r"^LINE (\d+): ?", re.MULTILINE)


@dataclass(frozen=True)
class DuckError:
    """What a DuckDB error message says, read once (from DuckDB's own text or `compact_error`'s line)."""

    message: str  # the text parsed (at most MAX_PARSED_CHARS)
    kind: str = ""  # "Binder", "Parser", "Catalog", "Conversion", … ("" when the text names none)
    missing_column: str | None = None  # a column DuckDB did not find
    qualifier: str | None = None  # the table or alias it was looked for in (`T2` of `T2.x`); None when bare
    missing_table: str | None = None  # a table DuckDB does not know (as the query wrote it)
    candidates: tuple[str, ...] = ()  # DuckDB's "Candidate bindings", in its order
    near: str | None = None  # the token of a syntax error ("syntax error at or near …")
    line: int | None = None  # the LINE of DuckDB's echo of the query
    column: int | None = None  # the caret's display column in that echoed line (0-based)
    nested_aggregate: bool = False  # an aggregate inside an aggregate (`SUM(CASE WHEN COUNT(x) > 1 …)`)
    ungrouped_column: str | None = None  # a column read outside an aggregate of a SELECT that groups (its name, bare)

    @property
    def unqualified_column(self) -> str | None:
        """The missing column when DuckDB looked for it bare ('Referenced column "x" not found')."""
        return self.missing_column if self.qualifier is None else None


def parse_duck_error(message: str | BaseException) -> DuckError:
    """The facts of a DuckDB error message (or exception); a message with none gives only its text."""
    text = str(message)[:MAX_PARSED_CHARS]
    kind = _KIND.search(text[:KIND_SEARCHED])
    column = qualifier = None
    if (not_in := _NOT_IN_TABLE.search(text)) is not None:
        qualifier = not_in.group(1).replace('""', '"')
    if (missing := _MISSING_COLUMN.search(text)) is not None:
        column = (missing.group(1) or missing.group(2)).replace('""', '"')
        if missing.group(1) is None:
            qualifier = None
    table = _MISSING_TABLE.search(text)
    near = _SYNTAX_NEAR.search(text)
    line, caret = _echo_position(text)
    ungrouped = _UNGROUPED.search(text)
    return DuckError(text, kind.group(1) if kind else "", column, qualifier, table.group(1) if table else None,
                     _candidates(text), near.group(1).replace('""', '"') if near else None, line, caret,
                     _NESTED_AGGREGATE in text, ungrouped.group(1).replace('""', '"') if ungrouped else None)


def _candidates(text: str) -> tuple[str, ...]:
    """The names after DuckDB's "Candidate bindings:", in its order."""
    at = text.find(_CANDIDATES)
    if at < 0:
        return ()
    names: list[str] = []
    i = at + len(_CANDIDATES)
    while len(names) < MAX_CANDIDATES and (quoted := _QUOTED.match(text, i)) is not None:
        names.append(quoted.group(1).replace('""', '"'))
        i = quoted.end()
    return tuple(names)


def _echo_position(text: str) -> tuple[int | None, int | None]:
    """(line, caret column) of DuckDB's `LINE n: <sql>` echo and the caret line under it."""
    echo = _ECHO.search(text)
    if echo is None:
        return None, None
    rest = text[echo.end():].split("\n", 2)
    carets = rest[1] if len(rest) > 1 else ""
    if not _CARETS.match(carets):
        return int(echo.group(1)), None
    return int(echo.group(1)), max(carets.index("^") - len(echo.group(0)), 0)


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

