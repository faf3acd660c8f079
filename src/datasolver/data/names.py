"""The canonical table-name rule: one stable DuckDB name per source table."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class TableNaming:
    """The DuckDB name one source table gets, and the other names that find it."""

    name: str
    aliases: tuple[str, ...] = ()


def assign_table_names(sources: Sequence[tuple[str, str, str]]) -> list[TableNaming]:
    """Names for tables given as (source name, file stem, file name), in order; pure (the catalog
    calls it).

    A table is named `canonical_name(source name)`. A name already taken becomes, for a table
    named after its file, its whole file name (`x.parquet` → `x_parquet`, `x.csv.gz` →
    `x_csv_gz`), else its file's stem in front (`<stem>__<name>`); then a number (`_2`, `_3` …).
    Its aliases are the source name as written and `df_<name>`, each kept only when it is no
    table's name and no other table wants it.
    """
    names: list[str] = []
    taken: set[str] = set()
    for source_name, stem, file_name in sources:
        name = canonical_name(source_name)
        if name in taken:
            own = canonical_name(stem)
            name = canonical_name(file_name) if own == name else f"{own}__{name}"
        base, n = name, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names.append(name)
    lowered = {name.lower() for name in names}
    candidates = [
        [a for a in dict.fromkeys((source_name, f"df_{name}")) if a.lower() != name.lower()]
        for (source_name, *_), name in zip(sources, names)
    ]
    wanted = Counter(a.lower() for aliases in candidates for a in aliases)
    return [
        TableNaming(name, tuple(a for a in aliases if a.lower() not in lowered and wanted[a.lower()] == 1))
        for name, aliases in zip(names, candidates)
    ]


def natural_key(text: str) -> list[object]:
    """Sort key that orders embedded numbers numerically: task_2 before task_10."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def quote_ident(name: str) -> str:
    """Double-quote an identifier for DuckDB, doubling embedded quotes."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """Single-quote a string literal for DuckDB."""
    return "'" + text.replace("'", "''") + "'"


_QUOTE_PAIRS = {"'": "'", '"': '"', "`": "`", "‘": "’", "“": "”"}


def without_quote_pair(name: str) -> str:
    """A column name without one pair of quote characters a file left around it (`'popul'`,
    `"popul"`, `‘popul’` → `popul`); a name that is only quotes, or has no pair, as it is."""
    if len(name) > 2 and _QUOTE_PAIRS.get(name[0]) == name[-1]:
        return name[1:-1]
    return name


def unquoted_note(quoted: Sequence[str]) -> str:
    """The note for column names whose quote pair `without_quote_pair` removed."""
    shown = ", ".join(f"{name} → {without_quote_pair(name)}" for name in quoted[:5])
    more = f" and {len(quoted) - 5} more" if len(quoted) > 5 else ""
    return f"quote characters around {len(quoted)} column name(s) removed: {shown}{more}"


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
