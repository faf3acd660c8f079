"""knowledge.md for the first prompt: what the table descriptions already say is said once.

knowledge.md files often list each table's columns as a Markdown table (name, type, meaning,
example values, unit). For a table the prompt describes in full, its profile already gives every
column's type and example values, so `compact_knowledge` keeps only the name and what the profile
cannot know (meaning, unit, format, notes), one line per column; a bare type word in a unit or
format cell ("文本", "整数") goes too. `merge_knowledge` goes one step further: when every column
of such a list is a column of every table the list is about, and each meaning can stand on one
line of the table section (a table's own column line, or a schema group's line when all of the
group's tables get the same meaning), the meanings become notes on those column lines and the list
leaves the knowledge text. A name is matched as written, or after Unicode normalization (NFKC:
full-width parentheses, trailing spaces, case); a list with a name that matches no column stays.
A cell broken over lines (an example value with line breaks, in a table whose rows end with `|`)
is read as part of its row.

Which tables a section is about: the backticked table names in its heading (`### 表 \\`Marks\\``),
else every table whose name ends with the heading (a family of same-schema tables, e.g.
土地成交信息表) or matches a backticked name pattern of the section (`<城市><区县>土地成交信息表`),
names written `类别(范围)` read as `范围类别`.

Everything else stays as written and in place: prose, key lines, example SQL, and the column
lists of tables the prompt does not describe in full (folded, listed from metadata only, or not
matched). A listing of tables (name, kind, scope, rows) all of which are described in full is
replaced by one line: the table section says all of it (rows, the schema group, the values
constant in each table). Runs of blank lines become one. The file itself stays readable verbatim
with `explore_data("\\\\knowledge")`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field

from datasolver.agent.tables import TableDigest
from datasolver.data.schema_groups import shared_notes

TABLE_HEADERS = {"表名", "表", "table", "table name"}
LISTING_NOTE = "(a listing of the {n} tables, all under Tables)"
NAME_HEADERS = {"列名", "字段", "字段名", "列", "column", "column name", "field", "field name"}
TYPE_HEADERS = {"类型", "数据类型", "字段类型", "type", "data type", "dtype"}
EXAMPLE_HEADERS = {"示例值", "示例", "样例", "例子", "example", "examples", "sample", "samples", "sample values",
                   "example values"}
UNIT_HEADERS = {"单位/格式", "单位", "格式", "unit", "units", "format", "unit/format"}
TYPE_WORDS = {"文本", "字符串", "整数", "数值", "小数", "浮点数", "text", "string", "integer", "int", "float",
              "number", "numeric"}
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*)$")
_SEPARATOR_CELL = re.compile(r"^:?-{2,}:?$")
_PLACEHOLDER = re.compile(r"<[^<>]+>")
_CATEGORY_SCOPE = re.compile(r"^(?P<category>.+?)[(（](?P<scope>.+)[)）]$")


@dataclass(frozen=True)
class MergedKnowledge:
    """knowledge.md less what the table section says, and the column notes the table section
    must show for that (table name -> column name -> meaning)."""

    text: str
    notes: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class _Block:
    """A Markdown table of knowledge.md and the section it stands in."""

    lines: list[str]  # one per row: a cell broken over lines is joined back into its row
    heading: str
    prose: str  # the section's text before the table, from its heading on
    raw: list[str] = field(default_factory=list)  # the lines as written


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
    return _render(_parse(knowledge), knowledge, lambda block: _compacted(block, names))


def merge_knowledge(knowledge: str, digest: TableDigest | None, folded: Collection[str] = ()) -> MergedKnowledge:
    """knowledge.md with the column lists whose every meaning can stand on a column line of the
    table section (`digest.render(folded, notes)`) taken out, and those notes; the other column
    lists compacted as `compact_knowledge` does. See the module docstring."""
    described = described_tables(digest, folded)
    if digest is None or not knowledge:
        return MergedKnowledge(compact_knowledge(knowledge, described))
    names = {n.lower() for n in described}
    parts = _parse(knowledge)
    blocks = [p for p in parts if isinstance(p, _Block)]
    groups = digest.groups(folded)
    profiles = {t.name: t for g in groups for t in g.tables}
    candidates = {id(b): notes for b in blocks if (notes := _block_notes(b, digest, profiles)) is not None}
    while True:  # drop the lists whose notes cannot all stand on a line; the rest may then fit
        notes: dict[str, dict[str, str]] = {}
        owner: dict[tuple[str, str], int] = {}
        clash: set[int] = set()
        for key, block_notes in candidates.items():
            for table, columns in block_notes.items():
                for column, note in columns.items():
                    if notes.setdefault(table, {}).setdefault(column, note) != note:
                        clash.add(key)
                    owner.setdefault((table, column), key)
        for group in groups:
            shown = shared_notes(group, notes)
            for table in group.tables:
                for column, note in notes.get(table.name, {}).items():
                    if shown.get(column) != note:
                        clash.add(owner[(table.name, column)])
        if not clash:
            break
        for key in clash:
            candidates.pop(key, None)
    merged = set(candidates)
    text = _render(parts, knowledge,
                   lambda block: [] if id(block) in merged else _compacted(block, names))
    return MergedKnowledge(text, {t: dict(c) for t, c in notes.items() if c})


def _parse(knowledge: str) -> list[str | _Block]:
    """Lines, with each run of `|` lines as one block (heading and section prose attached)."""
    parts: list[str | _Block] = []
    lines = knowledge.splitlines()
    heading, prose = "", []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _HEADING.match(line)
        if match:
            heading, prose = match["title"], []
        if line.lstrip().startswith("|"):
            start = i
            block = []
            while i < len(lines) and (lines[i].lstrip().startswith("|") or _continues(block, lines[i])):
                if lines[i].lstrip().startswith("|"):
                    block.append(lines[i])
                else:
                    block[-1] += " " + lines[i].strip()
                i += 1
            parts.append(_Block(block, heading, "\n".join(prose), lines[start:i]))
            continue
        parts.append(line)
        prose.append(line)
        i += 1
    return parts


def _continues(block: list[str], line: str) -> bool:
    """Whether `line` (not starting with `|`) is the rest of the block's last row: a cell broken
    over lines, in a table whose header ends with `|` while that row does not yet."""
    return (bool(block) and bool(line.strip()) and not _HEADING.match(line)
            and block[0].rstrip().endswith("|") and not block[-1].rstrip().endswith("|"))


def _render(parts: list[str | _Block], knowledge: str, block_lines) -> str:
    out: list[str] = []
    for part in parts:
        out += block_lines(part) if isinstance(part, _Block) else [part]
    text = "\n".join(out) + ("\n" if knowledge.endswith("\n") else "")
    return re.sub(r"\n{3,}", "\n\n", text)


def _compacted(block: _Block, names: set[str]) -> list[str]:
    if _lists_described_tables(block.lines, names):
        return [LISTING_NOTE.format(n=len(block.lines) - 2)]
    if _describes(block, names) and (rows := _column_table(block.lines)) is not block.lines:
        return rows
    return block.raw


def _describes(block: _Block, names: set[str]) -> bool:
    """Whether the section of `block` is about a table described in full (see `_about`)."""
    return bool(names) and any(_about(block, name) for name in names)


def _about(block: _Block, name: str) -> bool:
    """Whether the section of `block` is about the table called `name` (any case): its heading
    names it in backticks, or (a heading for a family of same-schema tables) the name ends with
    the heading or matches a backticked name pattern of the section, `类别(范围)` read as `范围类别`."""
    heading = block.heading.strip()
    if not heading:
        return False
    quoted = [q for q in re.findall(r"`([^`]+)`", heading) if not _PLACEHOLDER.search(q)]
    if quoted:
        return any(q.lower() == name.lower() for q in quoted)
    forms = {name.lower()}
    if match := _CATEGORY_SCOPE.match(name):
        forms.add((match["scope"] + match["category"]).lower())
    if any(form.endswith(heading.lower()) for form in forms):
        return True
    patterns = [q for q in re.findall(r"`([^`]+)`", heading + "\n" + block.prose) if _PLACEHOLDER.search(q)]
    return any(_pattern(p).fullmatch(form) for p in patterns for form in forms)


def _pattern(text: str) -> re.Pattern[str]:
    """`<城市><区县>土地成交信息表` as a regex: each `<…>` stands for any text."""
    return re.compile(".+".join(re.escape(part.lower()) for part in _PLACEHOLDER.split(text)))


def _block_notes(block: _Block, digest: TableDigest, profiles: dict) -> dict[str, dict[str, str]] | None:
    """Notes (table -> column -> meaning) for a column list whose every table is described in
    full and has every listed column; None for any other block."""
    rows = _column_rows(block.lines)
    if rows is None:
        return None
    tables = [e for e in digest.entries if any(_about(block, n) for n in (e.name, *e.info.aliases))]
    if not tables or any(e.name not in profiles for e in tables):
        return None
    notes: dict[str, dict[str, str]] = {}
    for entry in tables:
        columns = [c.name for c in profiles[entry.name].columns]
        resolved = [_resolve(name, columns) for name, _ in rows]
        if None in resolved or len(set(resolved)) < len(resolved):  # a name no column has, or one column twice
            return None
        for column, (_, note) in zip(resolved, rows):
            if note:
                notes.setdefault(entry.name, {})[column] = note
    return notes


def _resolve(name: str, columns: list[str]) -> str | None:
    """The column `name` means: the same name, or the one name equal after normalization."""
    if name in columns:
        return name
    found = [c for c in columns if _normal(c) == _normal(name)]
    return found[0] if len(found) == 1 else None


def _normal(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().strip("`").strip().casefold()


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


def _column_rows(block: list[str]) -> list[tuple[str, str]] | None:
    """A column list as (name, `meaning (unit; …)`) pairs, types and examples left out; None for
    any other Markdown table or a malformed one."""
    if len(block) < 3 or not all(_SEPARATOR_CELL.match(c) for c in _cells(block[1])):
        return None
    header = _cells(block[0])
    if header[0].lower() not in NAME_HEADERS:
        return None
    keep = _kept_columns(header)
    units = {j for j in keep if header[j].lower() in UNIT_HEADERS}
    rows = []
    for row in block[2:]:
        cells = _cells(row)
        if len(cells) != len(header):
            return None
        values = [cells[j] for j in keep if cells[j] and not (j in units and cells[j].lower() in TYPE_WORDS)]
        rows.append((cells[0], _meaning(values)))
    return rows


def _kept_columns(header: list[str]) -> list[int]:
    """Positions of a column list's cells that say what a profile cannot (not name, type, example)."""
    return [j for j, h in enumerate(header) if j > 0 and h.lower() not in TYPE_HEADERS | EXAMPLE_HEADERS]


def _column_table(block: list[str]) -> list[str]:
    """A column list as `name: meaning (unit; …)` lines, types and examples left out; any other
    Markdown table unchanged."""
    rows = _column_rows(block)
    if rows is None:
        return block
    header = _cells(block[0])
    keep = [header[j] for j in _kept_columns(header)]
    if not keep:
        return [f"{header[0]}:"] + [f"- {name}" for name, _ in rows]
    return [f"{header[0]}: {_meaning(keep)}"] + [f"- {name}: {note}" if note else f"- {name}" for name, note in rows]


def _meaning(values: list[str]) -> str:
    if not values:
        return ""
    rest = f" ({'; '.join(values[1:])})" if len(values) > 1 else ""
    return f"{values[0]}{rest}"
