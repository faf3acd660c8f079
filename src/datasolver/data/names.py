"""The canonical table-name rule: one stable DuckDB name per source table."""

from __future__ import annotations

import re

_NON_WORD = re.compile(r"\W")
_STARTS_WITH_DIGIT = re.compile(r"\d")


def canonical_name(source_name: str) -> str:
    """Lowercase; every non-word character becomes `_` one for one; `t_` before a leading digit.

    `\\w` is Python's Unicode word class, so CJK letters survive: `公司名单(最终)` → `公司名单_最终_`.
    """
    name = _NON_WORD.sub("_", source_name.lower())
    if not name:
        return "t_"
    if _STARTS_WITH_DIGIT.match(name):
        name = "t_" + name
    return name


def natural_key(text: str) -> list[object]:
    """Sort key that orders embedded numbers numerically: task_2 before task_10."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def quote_ident(name: str) -> str:
    """Double-quote an identifier for DuckDB, doubling embedded quotes."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """Single-quote a string literal for DuckDB."""
    return "'" + text.replace("'", "''") + "'"


def unique_names(names: list[str]) -> list[str]:
    """Column names made unique case-insensitively (DuckDB's rule): repeats get _1, _2 …; blanks column<N>."""
    seen: set[str] = set()
    out = []
    for i, name in enumerate(names):
        name = name if name.strip() else f"column{i}"
        candidate, n = name, 0
        while candidate.lower() in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out
