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
column is said the same way: a primary key as a note (`primary key`, `主键`; none for a key the
writer inferred when the profile shows the column unique without NULLs), a reference or join as
one line at the end of the table section per group of columns that hold the same key values
(`author.oid = organization.oid`, canonical names; `a = b` and `a = c` make one group `a = b = c`). A name is matched as written, or after Unicode
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
_REFERENCE_VERBS = {"→", "->", "references", "refers to", "引用"}
JOINS_HEADING = "Join keys (knowledge.md; a line's columns hold the same values):"
_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.*)$")
_PLACEHOLDER = re.compile(r"<[^<>]+>")
_CATEGORY_SCOPE = re.compile(r"^(?P<category>.+?)[(（](?P<scope>.+)[)）]$")
_ROWS_LINE = re.compile(r"^\s*(?:共\s*)?(?P<n>\d[\d,]*)\s*(?:rows?|行)\s*[.。]?\s*$", re.IGNORECASE)
_HEADING_ROWS = re.compile(r"\s*[(（]\s*(?:共\s*)?(?P<n>\d[\d,]*)\s*(?:rows?|行)\s*[)）]\s*$", re.IGNORECASE)
_TABLE_WORD = re.compile(r"^(?:table\b|表(?=\s|[:：]))\s*[:：]?\s*", re.IGNORECASE)

Notes = dict[str, dict[str, str]]  # table -> column -> note


@dataclass(frozen=True)
class MergedKnowledge:
    """knowledge.md less what the table section says, and the column notes the table section
    must show for that (table name -> column name -> meaning)."""

    text: str
    notes: Notes = field(default_factory=dict)
    joins: tuple[tuple[str, ...], ...] = ()  # `table.column` groups that hold the same key values

    def join_text(self) -> str:
        """The join keys as lines for the end of the table section; "" without any."""
        if not self.joins:
            return ""
        return "\n\n" + "\n".join([JOINS_HEADING] + [f"  {' = '.join(group)}" for group in self.joins])


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
    links: dict[int, list[_Link]] = {}
    for k, part in enumerate(parts):
        if isinstance(part, _KeyLine) and (keys := _key_notes(part, digest, profiles)) is not None:
            candidates[k], links[k] = keys
    keyed: dict[str, set[str]] = {}  # `table.column` -> the columns its key lines join it to
    for link in (link for found in links.values() for link in found):
        keyed.setdefault(link.left, set()).add(link.right)
        keyed.setdefault(link.right, set()).add(link.left)
    for k, part in enumerate(parts):
        if isinstance(part, _Block) and (found := _list_notes(part, digest, profiles, keyed)) is not None:
            candidates[k] = found
    while True:  # drop the parts whose notes cannot all stand on a line; the rest may then fit
        joins, pair_notes = _joins(candidates, links)
        notes, owners, clash = _gather({k: _plus(v, pair_notes.get(k, {})) for k, v in candidates.items()}, parts)
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
    return MergedKnowledge(_render(rendered, knowledge), {t: dict(c) for t, c in notes.items() if c}, joins)


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


def _list_notes(block: _Block, digest: TableDigest, profiles: dict, keyed: dict[str, set[str]]) -> Notes | None:
    """Notes (table -> column -> meaning) for a column list whose every table is described in
    full and has every listed column; None for any other block."""
    if block.columns is None:
        return None
    tables = _section_tables(block.heading, block.prose, digest)
    if not tables or any(e.name not in profiles for e in tables):
        return None
    rows = [(name, block.columns.kept(row)) for name, row in zip(block.columns.names(), block.columns.rows)]
    notes: Notes = {}
    for entry in tables:
        columns = [c.name for c in profiles[entry.name].columns]
        resolved = [_resolve(name, columns) for name, _ in rows]
        if None in resolved or len(set(resolved)) < len(resolved):  # a name no column has, or one column twice
            return None
        for column, (_, kept) in zip(resolved, rows):
            joined = keyed.get(f"{entry.name}.{column}", set())
            if note := _meaning([k for k in kept if not _restates(k, column, entry.name, joined)]):
                notes.setdefault(entry.name, {})[column] = note
    return notes


def _restates(text: str, column: str, table: str, joined: Collection[str] = ()) -> bool:
    """Whether an English meaning only spells out the column's and its table's names ("The name of
    the airline" for airline.airline_name, "Indicates whether the course has a lab or not" for
    course.has_lab), or, for a column the key lines join to others, that key ("Foreign key
    referencing the author table's primary key" for writes.aid, joined to author.aid)."""
    if not text.isascii():
        return False
    said = _words(column) | _words(table)
    if joined:
        said |= _KEY_WORDS.union(*(_words(other.replace(".", " ")) for other in joined))
    return bool(said) and _words(re.sub(r"\bor not\b", "", text)) <= said


_STOP_WORDS = frozenset("""a an the of for each every this that its it is are in on to by at with as and or which who
    where given unique record row entry table column field located associated assigned belongs belong
    corresponding indicates whether any""".split())
_KEY_WORDS = frozenset("foreign primary key referencing references refers reference pointing points".split())
_NAME_SUFFIXES = ("id", "name", "code", "num", "count", "type", "date", "time", "year")
_SAME_WORD = {"identifier": "id", "identification": "id", "ids": "id", "number": "num", "no": "num"}


def _words(text: str) -> set[str]:
    """Content words, lowercase: camelCase split, a possessive `'s` and a plural's `s` dropped, and
    a name word ending in a common suffix split too (`authorid` also says `author`, `id`; `aid` says `id`)."""
    text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", re.sub(r"'s\b", "", text)).lower()
    words = set()
    for word in re.findall(r"[a-z0-9]+", text):
        word = _SAME_WORD.get(word, word)
        if word in _STOP_WORDS:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
        suffix = next((x for x in _NAME_SUFFIXES if word.endswith(x) and len(word) > len(x)), None)
        if suffix:
            words |= {word[:-len(suffix)], suffix}
    return words


def _key_notes(line: _KeyLine, digest: TableDigest, profiles: dict) -> tuple[Notes, list[_Link]] | None:
    """Notes (primary keys) and join pairs (`table.column`, canonical names) for a key line whose
    every column is a column of a table described in full (named `table.column`, or a column of
    the section's tables); None otherwise."""
    notes: Notes = {}
    pairs: list[_Link] = []
    for fact in line.facts:
        columns = _key_columns(fact.column, line, digest, profiles)
        target = _key_columns(fact.target, None, digest, profiles) if fact.target is not None else None
        if not columns or (fact.target is not None and (not target or len(target) != 1)):
            return None
        for table, column in columns:
            if target:
                reference = fact.verb.lower() in _REFERENCE_VERBS or (
                    fact.verb == "=" and fact.label.lower().startswith(("foreign", "外键")))
                pairs.append(_Link(f"{table}.{column}", "{}.{}".format(*target[0]), reference))
            elif note := _key_note(fact, profiles[table], column):
                said = notes.setdefault(table, {})
                said[column] = "; ".join(filter(None, [said.get(column), note]))
    return notes, pairs


def _key_columns(text: str, line: _KeyLine | None, digest: TableDigest, profiles: dict) -> list[tuple[str, str]]:
    """(table, column) for a key line's `table.column` or, in a table's section, `column`; [] when
    a table is not described in full or lacks the column."""
    prefix, _, bare = text.rpartition(".")
    owner = _table_named(digest, prefix) if prefix else None
    if owner is not None:
        tables, name = [owner], bare
    elif line is not None:
        tables, name = _section_tables(line.heading, line.prose, digest), text
    else:
        return []
    found = []
    for entry in tables:
        column = _resolve(name, [c.name for c in profiles[entry.name].columns]) if entry.name in profiles else None
        if column is None:
            return []
        found.append((entry.name, column))
    return found


def _key_note(fact: KeyFact, profile, column: str) -> str:
    """`primary key`, `主键`; "" for a key the writer inferred from the data (`Primary key
    (inferred)`) when the profile shows it unique without NULLs: the column line says that."""
    stats = next(c for c in profile.columns if c.name == column)
    if "inferred" in fact.label.lower() and stats.distinct == profile.rows and stats.nulls == 0:
        return ""
    return fact.label[:1].lower() + fact.label[1:] if fact.label.isascii() else fact.label


@dataclass(frozen=True)
class _Link:
    """A join of a key line: `left` and `right` (`table.column`), `reference` for a foreign key."""

    left: str
    right: str
    reference: bool


def _joins(candidates: dict[int, Notes], links: dict[int, list[_Link]]) -> tuple[tuple[tuple[str, ...], ...], dict[int, Notes]]:
    """The join groups of three or more columns (one line each), and the joins of two columns as
    notes on the first one's line (`→ t.c` for a reference, `joins t.c`), by the key line that said them."""
    said = [(k, link) for k in sorted(candidates) for link in links.get(k, [])]
    groups = _join_groups([(link.left, link.right) for _, link in said])
    pairs = {frozenset(g) for g in groups if len(g) == 2}
    notes: dict[int, Notes] = {}
    for k, link in said:
        if frozenset((link.left, link.right)) in pairs:
            table, _, column = link.left.partition(".")
            note = f"{'→' if link.reference else 'joins'} {link.right}"
            line = notes.setdefault(k, {}).setdefault(table, {})
            line[column] = "; ".join(filter(None, [line.get(column), note]))
    return tuple(g for g in groups if len(g) > 2), notes


def _plus(notes: Notes, more: Notes) -> Notes:
    out = {t: dict(c) for t, c in notes.items()}
    for table, columns in more.items():
        for column, note in columns.items():
            line = out.setdefault(table, {})
            line[column] = "; ".join(filter(None, [line.get(column), note]))
    return out


def _join_groups(pairs: list[tuple[str, str]]) -> tuple[tuple[str, ...], ...]:
    """Joined pairs as groups of columns that hold the same key values (a pair's two sides in
    one group; groups and members in order of first mention): `a = b`, `a = c` say `a = b = c`."""
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    for left, right in pairs:
        a, b = group_of.get(left), group_of.get(right)
        if a is None and b is None:
            group_of[left] = group_of[right] = len(groups)
            groups.append(list(dict.fromkeys([left, right])))
        elif a is None or b is None:
            known = a if a is not None else b
            new = right if a is not None else left
            group_of[new] = known
            groups[known].append(new)
        elif a != b:
            for member in groups[b]:
                group_of[member] = a
            groups[a] += groups[b]
            groups[b] = []
    return tuple(tuple(g) for g in groups if len(g) > 1)


def _gather(candidates: dict[int, Notes], parts: list[_Part]):
    """The notes of the candidate parts per table and column (list meanings first, then key
    notes, each once), who gave each, and the lists that clash with an earlier list's meaning."""
    said: dict[tuple[str, str], list[tuple[int, str]]] = {}
    clash: set[int] = set()
    for key, part_notes in candidates.items():
        is_list = isinstance(parts[key], _Block)
        for table, columns in part_notes.items():
            for column, note in columns.items():
                if not note:
                    continue  # merged, nothing left to say (an inferred key the profile shows)
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
    """Notes as one text, each join verb once: `joins a; → b; joins c` said `joins a, c; → b`."""
    out: list[str] = []
    for note in (part for text in notes for part in re.split(r"; (?=joins |→ )", text)):
        verb, _, target = note.partition(" ")
        same = next((k for k, n in enumerate(out) if verb in ("joins", "→") and n.startswith(verb + " ")), None)
        if same is None:
            out.append(note)
        else:
            out[same] += f", {target}"
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
