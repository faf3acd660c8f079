"""knowledge.md for the first prompt: what the table descriptions already say is left out.

knowledge.md files often list each table's columns as a Markdown table (name, type, meaning,
example values, unit). For a table the prompt describes in full, its profile already gives every
column's type and example values, so `compact_knowledge` keeps only the name and what the profile
cannot know (meaning, unit, format, notes), one line per column; a bare type word in a unit or
format cell ("文本", "整数") goes too. Everything else stays as written: prose, key lines, example
SQL, and the column tables of tables the prompt does not describe in full (folded, listed from
metadata only, or not matched). A listing of tables (name, kind, scope, rows) all of which are
described in full is replaced by one line: the table section says all of it (rows, the schema
group, the values constant in each table). Runs of blank lines become one. The file itself stays
readable verbatim with `explore_data("\\knowledge")`.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from datasolver.agent.tables import TableDigest

TABLE_HEADERS = {"表名", "表", "table", "table name"}
LISTING_NOTE = "(a listing of {n} tables: name, kind, scope, rows; every one is described under Tables below)"
NAME_HEADERS = {"列名", "字段", "字段名", "列", "column", "column name", "field", "field name"}
TYPE_HEADERS = {"类型", "数据类型", "字段类型", "type", "data type", "dtype"}
EXAMPLE_HEADERS = {"示例值", "示例", "样例", "例子", "example", "examples", "sample", "samples", "sample values",
                   "example values"}
UNIT_HEADERS = {"单位/格式", "单位", "格式", "unit", "units", "format", "unit/format"}
TYPE_WORDS = {"文本", "字符串", "整数", "数值", "小数", "浮点数", "text", "string", "integer", "int", "float",
              "number", "numeric"}
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*)$")
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")


def described_tables(digest: TableDigest | None, folded: Collection[str] = ()) -> list[str]:
    """Names and aliases of the tables the prompt describes in full (profiled, not folded)."""
    if digest is None:
        return []
    skip = set(folded)
    return [name for e in digest.entries if e.profile is not None and e.name not in skip
            for name in (e.name, *e.info.aliases)]


def compact_knowledge(knowledge: str, described: Collection[str]) -> str:
    """knowledge.md with the column tables of the `described` tables (names, case-insensitive)
    reduced to what the table descriptions do not say; see the module docstring."""
    names = {n.lower() for n in described}
    out: list[str] = []
    lines = knowledge.splitlines()
    heading = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _HEADING.match(line)
        if match:
            heading = match["title"]
        if line.lstrip().startswith("|"):
            block = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                block.append(lines[i])
                i += 1
            if _lists_described_tables(block, names):
                out.append(LISTING_NOTE.format(n=len(block) - 2))
            else:
                out += _column_table(block) if _describes(heading, names) else block
            continue
        out.append(line)
        i += 1
    text = "\n".join(out) + ("\n" if knowledge.endswith("\n") else "")
    return re.sub(r"\n{3,}", "\n\n", text)


def _describes(heading: str, names: set[str]) -> bool:
    """Whether the section under `heading` is about a table described in full: a `name` in
    backticks that is one, or (a heading for a family of same-schema tables, e.g. 土地成交信息表)
    a described table whose name ends with it."""
    if not names or not heading:
        return False
    quoted = re.findall(r"`([^`]+)`", heading)
    if quoted:
        return any(q.lower() in names for q in quoted)
    family = heading.strip().lower()
    return bool(family) and any(n.endswith(family) for n in names)


def _lists_described_tables(block: list[str], names: set[str]) -> bool:
    """A Markdown table listing tables (first column 表名/table), every one of them described in
    full under Tables, where its name, rows, schema group and per-table constant values stand."""
    if len(block) < 3 or not all(_SEPARATOR_CELL.match(c) for c in _cells(block[1])):
        return False
    if _cells(block[0])[0].lower() not in TABLE_HEADERS:
        return False
    return all(_cells(row)[0].strip("`").lower() in names for row in block[2:])


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _column_table(block: list[str]) -> list[str]:
    """A column list as `name: meaning (unit; …)` lines, types and examples left out; any other
    Markdown table unchanged."""
    if len(block) < 2 or not all(_SEPARATOR_CELL.match(c) for c in _cells(block[1])):
        return block
    header = _cells(block[0])
    if header[0].lower() not in NAME_HEADERS:
        return block  # a table listing or anything else: not a column list
    keep = [j for j, h in enumerate(header) if j > 0 and h.lower() not in TYPE_HEADERS | EXAMPLE_HEADERS]
    if not keep:
        return [f"{header[0]}:"] + [f"- {_cells(row)[0]}" for row in block[2:]]
    units = {j for j in keep if header[j].lower() in UNIT_HEADERS}
    out = [_line(header[0], [header[j] for j in keep])]
    for row in block[2:]:
        cells = _cells(row)
        if len(cells) != len(header):
            return block  # a malformed row: keep the table as written
        values = [cells[j] for j in keep if cells[j] and not (j in units and cells[j].lower() in TYPE_WORDS)]
        out.append("- " + _line(cells[0], values))
    return out


def _line(name: str, values: list[str]) -> str:
    if not values:
        return name
    rest = f" ({'; '.join(values[1:])})" if len(values) > 1 else ""
    return f"{name}: {values[0]}{rest}"
