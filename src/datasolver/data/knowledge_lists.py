"""knowledge.md's column lists and key lines, in the forms people write them: the one reader.

A column list is a table whose header names a column-name cell and at least one other cell of
the vocabulary below (English or Chinese, any case; `_` read as a space): a Markdown pipe table
(`| column | type | description | values |`, `| 列名 | 类型 | 释义 | 示例值 |`) or BIRD's
`database_description` CSV (`original_column_name,column_name,column_description,data_format,
value_description`, fenced or bare). Each header cell gets a role:

- `name`: the column; `type`: its type; `examples`: example values (what a profile shows);
- `values`: possible values; a plain list of them (`e.g. 1; 2`, `one of: a, b`, `如 …`,
  `(no values)`) is what the data says, anything that says what a value means (`1 = yes`) stays;
- `unit`: unit or format (a bare type word in it is a type); `meaning` and any header not listed:
  what the data cannot say. In BIRD's header `column_name` is the expanded name (a meaning).

A key line (`Primary key (inferred): \\`aid\\`.`, `Join key: \\`a.x\\` references \\`b.y\\`.`,
`主键：Name`, `外键：product_name → price.name`, `关联键：…`) is read into `KeyFact`s.
`agent.knowledge` says these facts on the prompt's column lines; `\\lint` checks the names.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from datasolver.data.pipe_tables import find_pipe_tables

ROLE_WORDS: dict[str, frozenset[str]] = {
    "name": frozenset({"列名", "字段", "字段名", "列", "字段名称", "column", "column name", "columns", "field",
                       "field name", "fields", "name", "original column name", "attribute"}),
    "type": frozenset({"类型", "数据类型", "字段类型", "type", "data type", "dtype", "data format", "column type"}),
    "examples": frozenset({"示例值", "示例", "样例", "例子", "样例值", "example", "examples", "sample", "samples",
                           "sample values", "example values", "sample value", "example value"}),
    "values": frozenset({"取值", "可选值", "取值范围", "values", "value", "possible values", "allowed values"}),
    "unit": frozenset({"单位/格式", "单位", "格式", "unit", "units", "format", "unit/format"}),
    "meaning": frozenset({"释义", "含义", "说明", "描述", "注释", "备注", "description", "meaning", "comment",
                          "comments", "notes", "note", "column description", "value description", "definition"}),
}
TABLE_HEADERS = frozenset({"表名", "表", "table", "table name"})
TYPE_WORDS = frozenset({"文本", "字符串", "整数", "数值", "小数", "浮点数", "日期", "布尔", "text", "string",
                        "integer", "int", "float", "number", "numeric", "real", "date", "boolean", "bool"})
_VALUE_LIST = re.compile(r"^\s*(?:e\.g\.|eg\b|for example|such as|one of|any of|例如|比如|如|取值为?|可选值?)\s*[:：]?\s*",
                         re.IGNORECASE)
_NO_VALUES = re.compile(r"^\s*(?:\(no values\)|（无）|无|none)\s*(?:\(\d+ missing\))?\s*$", re.IGNORECASE)
_VALUE_MEANING = re.compile(r"=|表示|代表|意为|\bmeans?\b|\bstands? for\b|：|:(?!\d)")  # not a time's colon
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def header_role(cell: str, bird: bool = False) -> str | None:
    """The role of a column list's header cell, None when the vocabulary does not know it."""
    word = " ".join(cell.strip().strip("`*").replace("_", " ").lower().split())
    if bird and word == "column name":
        return "meaning"  # BIRD: the expanded, human name; original_column_name is the name
    return next((role for role, words in ROLE_WORDS.items() if word in words), None)


@dataclass(frozen=True)
class ColumnList:
    """One column list of the text: header, roles, rows (cells), the 0-based line range
    [start, end) it covers (fences of a CSV block included) and its lines joined per row."""

    header: tuple[str, ...]
    roles: tuple[str | None, ...]
    rows: tuple[tuple[str, ...], ...]
    start: int
    end: int
    form: str  # "pipe" or "csv"

    @property
    def name_at(self) -> int:
        return self.roles.index("name")

    def names(self) -> list[str]:
        return [row[self.name_at] for row in self.rows]

    def kept(self, row: tuple[str, ...]) -> list[str]:
        """The cells of `row` a profile cannot say (meaning, unit, facts about values, unknown
        headers), in header order; types, examples, bare type words and repeats of the name left out."""
        name = _plain(row[self.name_at])
        out = []
        for cell, role in zip(row, self.roles):
            text = cell.strip()
            if not text or role in ("name", "type", "examples") or _plain(text) == name:
                continue
            if role == "unit" and text.lower() in TYPE_WORDS:
                continue
            if role in ("values", "meaning") and _value_list(text):
                continue
            out.append(text)
        return out

    def kept_headers(self) -> list[str]:
        return [h for h, role in zip(self.header, self.roles) if role not in ("name", "type", "examples")]


def _value_list(text: str) -> bool:
    """A cell that only lists values (`e.g. 1; 2`, `one of: a, b`, `(no values)`): the data says
    them; one that says what a value means (`1 = yes`, `Y: approved`) is no list."""
    if _NO_VALUES.match(text):
        return True
    prefix = _VALUE_LIST.match(text)
    return prefix is not None and not _VALUE_MEANING.search(text[prefix.end():])


def _plain(text: str) -> str:
    return " ".join(text.replace("_", " ").casefold().split())


def find_column_lists(lines: list[str]) -> list[ColumnList]:
    """Every column list of the text (pipe tables with cells broken over lines read whole, BIRD
    CSV blocks); a table with a row of the wrong width is no column list."""
    found = []
    for table in find_pipe_tables(lines, broken_rows=True):
        roles = tuple(header_role(h) for h in table.header)
        if _is_column_list(roles) and not table.ragged_rows and not table.refused:
            found.append(ColumnList(tuple(table.header), roles, tuple(tuple(r) for r in table.rows),
                                    table.first_line - 1, table.last_line, "pipe"))
    return sorted(found + _csv_lists(lines), key=lambda c: c.start)


def _is_column_list(roles: tuple[str | None, ...]) -> bool:
    return roles.count("name") == 1 and any(r not in (None, "name") for r in roles)


def _csv_lists(lines: list[str]) -> list[ColumnList]:
    """BIRD-style CSV blocks: a comma-separated header of at least three known cells, its rows up
    to a blank line or a fence. A fence right around the block belongs to it."""
    found = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "|" in line or line.count(",") < 2:
            i += 1
            continue
        header = next(csv.reader([line]))
        bird = any(_plain(h) == "original column name" for h in header)
        roles = tuple(header_role(h, bird) for h in header)
        if sum(r is not None for r in roles) < 3 or not _is_column_list(roles):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() and not _FENCE.match(lines[j]):
            j += 1
        rows = list(csv.reader(lines[i + 1:j]))
        if not rows or any(len(r) != len(header) for r in rows):
            i = j
            continue
        start, end = i, j
        if i > 0 and _FENCE.match(lines[i - 1]) and j < len(lines) and _FENCE.match(lines[j]):
            start, end = i - 1, j + 1
        found.append(ColumnList(tuple(h.strip() for h in header), roles,
                                tuple(tuple(c.strip() for c in r) for r in rows), start, end, "csv"))
        i = end
    return found


# --------------------------------------------------------------------------- key lines

@dataclass(frozen=True)
class KeyFact:
    """One fact of a key line: `column` (as written, maybe `table.column`) is a primary key
    (`target` None), or points at / joins `target` (as written)."""

    label: str  # as written: "Primary key (inferred)", "主键", "Join key", "外键"
    column: str
    target: str | None = None
    verb: str = ""  # "references", "can be joined with", "→", … as written


_KEY_LABEL = re.compile(
    r"(?P<label>(?:primary|foreign|join|unique)\s+keys?(?:\s*\([^)]*\))?|主键|外键|关联键|连接键|唯一键)\s*[:：]\s*",
    re.IGNORECASE)
_NAME = r"`[^`]+`|[^\s,，、;；`→]+"
_LINK = re.compile(rf"^(?P<a>{_NAME})\s*(?P<verb>→|->|=|references|refers to|can be joined with|joins(?: with)?|"
                   rf"关联|对应|引用)\s*(?P<b>{_NAME})\s*[.。]?$", re.IGNORECASE)
_NAMES = re.compile(rf"^(?:{_NAME})(?:\s*[,，、]\s*(?:{_NAME}))*\s*[.。]?$")


def read_key_line(line: str) -> list[KeyFact] | None:
    """The facts of a line made only of key statements (`；`/`;` between them), else None."""
    text = line.strip().lstrip("-*").strip()
    parts = [p.strip() for p in re.split(r"[;；]", text) if p.strip()]
    if not parts:
        return None
    facts: list[KeyFact] = []
    for part in parts:
        match = _KEY_LABEL.match(part)
        if not match:
            return None
        label, rest = match["label"], part[match.end():].strip()
        primary = label.lower().startswith(("primary", "unique")) or label in ("主键", "唯一键")
        if primary and _NAMES.match(rest):
            names = [n.strip("`") for n in re.findall(_NAME, rest.rstrip(".。"))]
            if len(names) != 1:  # a composite key is said once, as written
                return None
            facts.append(KeyFact(label, names[0]))
        elif not primary and (link := _LINK.match(rest)):
            facts.append(KeyFact(label, link["a"].strip("`"), link["b"].strip("`").rstrip(".。"), link["verb"]))
        else:
            return None
    return facts
