"""knowledge.md for the first prompt: what the table descriptions already say is said once.

knowledge.md files describe each table's columns in many forms (`data.knowledge_lists` reads
them: Markdown column tables with English or Chinese headers, BIRD's `database_description` CSV;
key lines such as `Primary key: \\`aid\\``, `Join key: \\`a.x\\` references \\`b.y\\``, `外键：x → t.y`).
For a table the prompt describes in full, its profile already gives every column's type, range and
an example, so `compact_knowledge` keeps only the name and what the profile cannot know (meaning,
unit, format, facts about values, notes), one line per column. `merge_knowledge` goes one step
further: when every column of such a list is a column of every table the list is about, and each
meaning can stand on one line of the table section (a table's own column line, or a schema
group's line when all of the group's tables get the same meaning), the meanings become notes on
those column lines and the list leaves the knowledge text. A key line whose every column is such a
column becomes notes the same way (`primary key`, `→ t.y` for a reference, `joins t.y`; the
target's table under its canonical name). A name is matched as written, or after Unicode
normalization (NFKC: full-width parentheses, trailing spaces, case); a list with a name that
matches no column stays. A section about one table (its heading names it) that is left with
nothing but its row count, equal to the profile's, goes as a whole: the table section says it.

Which tables a section is about: the backticked table names in its heading (`### 表 \\`Marks\\``),
else every table whose name ends with the heading (`Table`/`表` and a `.csv` or row count around
it aside; a family of same-schema tables, e.g. 土地成交信息表) or matches a backticked name
pattern of the section (`<城市><区县>土地成交信息表`), names written `类别(范围)` read as `范围类别`.

Everything else stays as written and in place: prose, evidence, rules, example SQL, key lines that
cannot be merged, and the column lists of tables the prompt does not describe in full (folded,
listed from metadata only, or not matched). A listing of tables (name, kind, scope, rows) all of
which are described in full is replaced by one line: the table section says all of it (rows, the
schema group, the values constant in each table). Runs of blank lines become one. The file itself
stays readable verbatim with `explore_data("\\\\knowledge")`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field

from datasolver.agent.tables import TableDigest, TableEntry
from datasolver.data.knowledge_lists import TABLE_HEADERS, ColumnList, KeyFact, find_column_lists, read_key_line
from datasolver.data.pipe_tables import find_pipe_tables
from datasolver.data.schema_groups import shared_notes

LISTING_NOTE = "(a listing of the {n} tables, all under Tables)"
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*)$")
_PLACEHOLDER = re.compile(r"<[^<>]+>")
_CATEGORY_SCOPE = re.compile(r"^(?P<category>.+?)[(（](?P<scope>.+)[)）]$")
_ROWS_LINE = re.compile(r"^\s*(?:共\s*)?(?P<n>\d[\d,]*)\s*(?:rows?|行)\s*[.。]?\s*$", re.IGNORECASE)
_HEADING_ROWS = re.compile(r"\s*[(（]\s*(?:共\s*)?(?P<n>\d[\d,]*)\s*(?:rows?|行)\s*[)）]\s*$", re.IGNORECASE)
_TABLE_WORD = re.compile(r"^(?:table\b|表(?=\s|[:：]))\s*[:：]?\s*", re.IGNORECASE)
_REFERENCE_VERBS = {"→", "->", "references", "refers to", "引用"}

Notes = dict[str, dict[str, str]]  # table -> column -> note


@dataclass(frozen=True)
class MergedKnowledge:
    """knowledge.md less what the table section says, and the column notes the table section
    must show for that (table name -> column name -> meaning)."""

    text: str
    notes: Notes = field(default_factory=dict)


@dataclass
class _Block:
    """A Markdown table (or BIRD CSV block) of knowledge.md and the section it stands in."""

    raw: list[str]  # the lines as written
    heading: str
    prose: str  # the section's text before the table, from its heading on
    columns: ColumnList | None = None  # when it is a column list
    listed: list[str] | None = None  # when it is a listing of tables: their names


@dataclass
class _KeyLine:
    """A line of key statements and the section it stands in."""

    line: str
    facts: list[KeyFact]
    heading: str
    prose: str


@dataclass
class _Heading:
    line: str
    title: str
    level: int


_Part = str | _Block | _KeyLine | _Heading


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
    parts = _parse(knowledge)
    return _render([_compacted(p, names) if isinstance(p, _Block) else _lines(p) for p in parts], knowledge)


def merge_knowledge(knowledge: str, digest: TableDigest | None, folded: Collection[str] = ()) -> MergedKnowledge:
    """knowledge.md with the column lists and key lines whose every fact can stand on a column
    line of the table section (`digest.render(folded, notes)`) taken out, and those notes; the
    other column lists compacted as `compact_knowledge` does. See the module docstring."""
    described = described_tables(digest, folded)
    if digest is None or not knowledge:
        return MergedKnowledge(compact_knowledge(knowledge, described))
    names = {n.lower() for n in described}
    parts = _parse(knowledge)
    groups = digest.groups(folded)
    profiles = {t.name: t for g in groups for t in g.tables}
    candidates: dict[int, Notes] = {}
    for k, part in enumerate(parts):
        found = (_list_notes(part, digest, profiles) if isinstance(part, _Block)
                 else _key_notes(part, digest, profiles) if isinstance(part, _KeyLine) else None)
        if found is not None:
            candidates[k] = found
    while True:  # drop the parts whose notes cannot all stand on a line; the rest may then fit
        notes, owners, clash = _gather(candidates, parts)
        for group in groups:
            shown = shared_notes(group, notes)
            for table in group.tables:
                for column, note in notes.get(table.name, {}).items():
                    if shown.get(column) != note:
                        clash.add(_blame(owners[(table.name, column)], parts))
        if not clash:
            break
        for key in clash:
            candidates.pop(key, None)
    rendered = [[] if k in candidates else _compacted(p, names) if isinstance(p, _Block) else _lines(p)
                for k, p in enumerate(parts)]
    _drop_emptied_sections(parts, rendered, digest, profiles)
    return MergedKnowledge(_render(rendered, knowledge), {t: dict(c) for t, c in notes.items() if c})


def _parse(knowledge: str) -> list[_Part]:
    """Lines; each column list or table listing as one block, each key line as one part (their
    section's heading and prose attached); headings as parts."""
    lines = knowledge.splitlines()
    lists = {c.start: c for c in find_column_lists(lines)}
    listings = {t.first_line - 1: t for t in find_pipe_tables(lines, broken_rows=True)
                if t.header[0].strip("`").lower() in TABLE_HEADERS and not t.ragged_rows}
    parts: list[_Part] = []
    heading, prose = "", []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i in lists:
            found = lists[i]
            parts.append(_Block(lines[found.start:found.end], heading, "\n".join(prose), columns=found))
            i = found.end
            continue
        if i in listings:
            table = listings[i]
            parts.append(_Block(lines[i:table.last_line], heading, "\n".join(prose),
                                listed=[row[0].strip("`") for row in table.rows]))
            i = table.last_line
            continue
        match = _HEADING.match(line)
        if match:
            heading, prose = match["title"], []
            parts.append(_Heading(line, match["title"], len(line) - len(line.lstrip("#"))))
        elif facts := read_key_line(line):
            parts.append(_KeyLine(line, facts, heading, "\n".join(prose)))
        else:
            parts.append(line)
        prose.append(line)
        i += 1
    return parts


def _lines(part: _Part) -> list[str]:
    if isinstance(part, _Block):
        return part.raw
    if isinstance(part, (_KeyLine, _Heading)):
        return [part.line]
    return [part]


def _render(rendered: list[list[str]], knowledge: str) -> str:
    text = "\n".join(line for lines in rendered for line in lines) + ("\n" if knowledge.endswith("\n") else "")
    return re.sub(r"\n{3,}", "\n\n", text)


def _compacted(block: _Block, names: set[str]) -> list[str]:
    if block.listed is not None and block.listed and all(n.lower() in names for n in block.listed):
        return [LISTING_NOTE.format(n=len(block.listed))]
    if block.columns is not None and names and any(_about(block.heading, block.prose, n) for n in names):
        return _column_lines(block.columns)
    return block.raw


def _column_lines(columns: ColumnList) -> list[str]:
    """A column list as `name: meaning (unit; …)` lines, types and examples left out."""
    head = columns.header[columns.name_at]
    kept = columns.kept_headers()
    rows = [(name, _meaning(columns.kept(row))) for name, row in zip(columns.names(), columns.rows)]
    return ([f"{head}: {_meaning(kept)}" if kept else f"{head}:"]
            + [f"- {name}: {note}" if note else f"- {name}" for name, note in rows])


def _about(heading: str, prose: str, name: str) -> bool:
    """Whether the section under `heading` is about the table called `name` (any case): the
    heading names it in backticks, or (a heading for a family of same-schema tables) the name ends
    with the heading or matches a backticked name pattern of the section, `类别(范围)` read as `范围类别`."""
    heading = heading.strip()
    if not heading:
        return False
    quoted = [q for q in re.findall(r"`([^`]+)`", heading) if not _PLACEHOLDER.search(q)]
    if quoted:
        return any(q.lower() == name.lower() for q in quoted)
    title = _bare_title(heading).lower()
    forms = {name.lower()}
    if match := _CATEGORY_SCOPE.match(name):
        forms.add((match["scope"] + match["category"]).lower())
    if title and any(form.endswith(title) for form in forms):
        return True
    patterns = [q for q in re.findall(r"`([^`]+)`", heading + "\n" + prose) if _PLACEHOLDER.search(q)]
    return any(_pattern(p).fullmatch(form) for p in patterns for form in forms)


def _bare_title(heading: str) -> str:
    """A heading less a leading `Table`/`表`, a row count in parentheses and a `.csv` ending."""
    title = _HEADING_ROWS.sub("", _TABLE_WORD.sub("", heading.strip()))
    return re.sub(r"\.csv$", "", title, flags=re.IGNORECASE).strip()


def _pattern(text: str) -> re.Pattern[str]:
    """`<城市><区县>土地成交信息表` as a regex: each `<…>` stands for any text."""
    return re.compile(".+".join(re.escape(part.lower()) for part in _PLACEHOLDER.split(text)))


def _names(entry: TableEntry) -> tuple[str, ...]:
    return (entry.name, *entry.info.aliases, entry.info.source_name)


def _table_named(digest: TableDigest, text: str) -> TableEntry | None:
    """The table `text` names: its canonical name, an alias or its source name, up to NFKC and case."""
    key = _normal(text)
    return next((e for e in digest.entries if any(_normal(n) == key for n in _names(e) if n)), None)


def _section_tables(heading: str, prose: str, digest: TableDigest) -> list[TableEntry]:
    return [e for e in digest.entries if any(_about(heading, prose, n) for n in _names(e) if n)]


def _list_notes(block: _Block, digest: TableDigest, profiles: dict) -> Notes | None:
    """Notes (table -> column -> meaning) for a column list whose every table is described in
    full and has every listed column; None for any other block."""
    if block.columns is None:
        return None
    tables = _section_tables(block.heading, block.prose, digest)
    if not tables or any(e.name not in profiles for e in tables):
        return None
    rows = [(name, _meaning(block.columns.kept(row))) for name, row in zip(block.columns.names(), block.columns.rows)]
    notes: Notes = {}
    for entry in tables:
        columns = [c.name for c in profiles[entry.name].columns]
        resolved = [_resolve(name, columns) for name, _ in rows]
        if None in resolved or len(set(resolved)) < len(resolved):  # a name no column has, or one column twice
            return None
        for column, (_, note) in zip(resolved, rows):
            if note:
                notes.setdefault(entry.name, {})[column] = note
    return notes


def _key_notes(line: _KeyLine, digest: TableDigest, profiles: dict) -> Notes | None:
    """Notes for a key line whose every column is a column of a table described in full (named
    `table.column`, or a column of the section's tables); None otherwise."""
    notes: Notes = {}
    for fact in line.facts:
        prefix, _, bare = fact.column.rpartition(".")
        owner = _table_named(digest, prefix) if prefix else None
        tables, name = ([owner], bare) if owner is not None else (
            _section_tables(line.heading, line.prose, digest), fact.column)
        if not tables or any(e.name not in profiles for e in tables):
            return None
        for entry in tables:
            column = _resolve(name, [c.name for c in profiles[entry.name].columns])
            if column is None:
                return None
            said = notes.setdefault(entry.name, {})
            said[column] = "; ".join(filter(None, [said.get(column), _key_note(fact, digest)]))
    return notes


def _key_note(fact: KeyFact, digest: TableDigest) -> str:
    """`primary key (inferred)`, `主键`, `→ organization.oid` or `joins flight.airline_code`."""
    if fact.target is None:
        return fact.label[:1].lower() + fact.label[1:] if fact.label.isascii() else fact.label
    prefix, dot, column = fact.target.rpartition(".")
    entry = _table_named(digest, prefix) if dot else None
    target = f"{entry.name}.{column}" if entry is not None else fact.target
    reference = fact.verb.lower() in _REFERENCE_VERBS or (fact.verb == "=" and fact.label.lower().startswith(
        ("foreign", "外键")))
    return f"→ {target}" if reference else f"joins {target}"


def _gather(candidates: dict[int, Notes], parts: list[_Part]):
    """The notes of the candidate parts per table and column (list meanings first, then key
    notes, each once), who gave each, and the lists that clash with an earlier list's meaning."""
    said: dict[tuple[str, str], list[tuple[int, str]]] = {}
    clash: set[int] = set()
    for key, part_notes in candidates.items():
        is_list = isinstance(parts[key], _Block)
        for table, columns in part_notes.items():
            for column, note in columns.items():
                earlier = said.setdefault((table, column), [])
                if is_list and any(isinstance(parts[k], _Block) and n != note for k, n in earlier):
                    clash.add(key)
                earlier.append((key, note))
    notes: Notes = {}
    for (table, column), given in said.items():
        ordered = sorted(given, key=lambda kn: (not isinstance(parts[kn[0]], _Block), kn[0]))
        notes.setdefault(table, {})[column] = _joined(list(dict.fromkeys(n for _, n in ordered)))
    owners = {tc: [k for k, _ in given] for tc, given in said.items()}
    return notes, owners, clash


def _joined(notes: list[str]) -> str:
    """Notes as one text: `joins a; joins b` said `joins a, b` (and `→ a; → b` as `→ a, b`)."""
    out: list[str] = []
    for note in notes:
        verb, _, target = note.partition(" ")
        if out and verb in ("joins", "→") and out[-1].startswith(verb + " "):
            out[-1] += f", {target}"
        else:
            out.append(note)
    return "; ".join(out)


def _blame(owners: list[int], parts: list[_Part]) -> int:
    """Which part to keep as written when a column's notes cannot stand on its line: a key line
    first (a list carries more), else the first list."""
    return next((k for k in owners if isinstance(parts[k], _KeyLine)), owners[0])


def _drop_emptied_sections(parts: list[_Part], rendered: list[list[str]], digest: TableDigest,
                           profiles: dict) -> None:
    """Empty the sections about one described table that kept nothing but blank lines and its row
    count (in the heading or on a line), equal to the profile's: the table section says it."""
    for h, part in enumerate(parts):
        if not isinstance(part, _Heading):
            continue
        entry = _heading_table(part.title, digest)
        if entry is None or entry.name not in profiles:
            continue
        rows = profiles[entry.name].rows
        stated = _HEADING_ROWS.search(part.title)
        if stated and _count(stated["n"]) != rows:
            continue
        end = next((k for k in range(h + 1, len(parts)) if isinstance(parts[k], _Heading)), len(parts))
        if end < len(parts) and parts[end].level > part.level:
            continue  # subsections follow: the heading still has a job
        left = [line for k in range(h + 1, end) for line in rendered[k] if line.strip()]
        if all((m := _ROWS_LINE.match(line)) and _count(m["n"]) == rows for line in left):
            for k in range(h, end):
                rendered[k] = []


def _heading_table(title: str, digest: TableDigest) -> TableEntry | None:
    """The one table a heading is about by name (backticked, or the bare title), else None."""
    quoted = [q for q in re.findall(r"`([^`]+)`", title) if not _PLACEHOLDER.search(q)]
    if len(quoted) > 1:
        return None
    return _table_named(digest, quoted[0] if quoted else _bare_title(title))


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def _resolve(name: str, columns: list[str]) -> str | None:
    """The column `name` means: the same name, or the one name equal after normalization."""
    if name in columns:
        return name
    found = [c for c in columns if _normal(c) == _normal(name)]
    return found[0] if len(found) == 1 else None


def _normal(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().strip("`").strip().casefold()


def _meaning(values: list[str]) -> str:
    if not values:
        return ""
    rest = f" ({'; '.join(values[1:])})" if len(values) > 1 else ""
    return f"{values[0]}{rest}"
