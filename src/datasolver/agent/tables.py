"""Table descriptions for the prompt: a digest of the engine's profiles, rendered compactly.

`digest_tables` profiles the catalog once (the expensive part); `TableDigest.render` turns it into
text and can fold any tables to one line each (see `agent.fit`). Same-schema tables are described
once (`data.schema_groups`); the digest's `schema_format` says how a group shown in full is
written (`data.schema_formats`: the profile text, `CREATE TABLE` statements, or M-Schema).
Profiling loads a table, so big tables (often decoys) and tables past the profiling budget are
listed from cheap metadata only: name, rows, source, column names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field

from datasolver.agent.tokens import estimate_tokens
from datasolver.clip import clip, clip_names
from datasolver.data import Catalog, DataError, TableInfo, TableProfile, profile_table
from datasolver.data.results import escape_breaks
from datasolver.data.schema_groups import (
    ColumnNotes,
    SchemaGroup,
    constant_value,
    group_by_schema,
    source_text,
)
from datasolver.data.schema_formats import SchemaFormat, render_groups

MAX_COLUMNS_LISTED = 60
# A generous guess of a profile's text before it is made (header; one line per column: type,
# counts, range, a clipped example), to load together only the tables that will be profiled.
_PROFILE_HEAD_CHARS, _PROFILE_LINE_CHARS, _UNKNOWN_COLUMNS = 120, 200, 20
FOLDED_HEADING = "Folded to one line (less relevant; queryable; `\\schema NAME` for details):"


@dataclass(frozen=True)
class TableEntry:
    """One table of the digest: its listing, and its profile unless it was listed from metadata only."""

    info: TableInfo
    profile: TableProfile | None = None
    note: str = ""  # why there is no profile

    @property
    def name(self) -> str:
        return self.info.name

    def search_text(self) -> str:
        """Name, origin, column names and constant values (what relevance scoring looks at)."""
        parts = [self.info.name, self.info.origin or "", " ".join(self.info.aliases), " ".join(self.info.columns or [])]
        if self.profile is not None:
            parts += [v for c in self.profile.columns if (v := constant_value(c)) is not None]
        return " ".join(parts)


@dataclass(frozen=True)
class TableDigest:
    """Every table of a task, profiled once; rendered with any subset folded to one line each."""

    entries: tuple[TableEntry, ...] = ()
    skipped: tuple[str, ...] = field(default=())  # "path: reason" of files that could not be read
    notes: tuple[str, ...] = field(default=())  # "path: reason" of what loading said (encoding, rows skipped, …)
    schema_format: SchemaFormat = "profile"  # how a table shown in full is written (`data.schema_formats`)
    db_id: str = ""  # the name M-Schema's `【DB_ID】` line gives the tables (the task's id)

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def ordered(self, names: list[str]) -> TableDigest:
        """The same digest with its entries in the order of `names` (others after, as they were)."""
        rank = {name: i for i, name in enumerate(names)}
        entries = sorted(self.entries, key=lambda e: rank.get(e.name, len(rank)))
        return dataclasses.replace(self, entries=tuple(entries))

    def fold_units(self) -> list[tuple[str, ...]]:
        """What folding can shrink: each schema group of profiled tables (a group folds as a whole,
        since its members are already one line each), in catalog order. Metadata-only tables are
        one line already and are no unit."""
        profiled = [e.profile for e in self.entries if e.profile is not None]
        return [tuple(t.name for t in group.tables) for group in group_by_schema(profiled)]

    def groups(self, folded: Collection[str] = ()) -> list[SchemaGroup]:
        """The schema groups that `render(folded)` describes in full (profiled, not folded)."""
        fold = set(folded)
        return group_by_schema([e.profile for e in self.entries if e.profile is not None and e.name not in fold])

    def render(self, folded: Collection[str] = (), notes: ColumnNotes | None = None) -> str:
        """Schema groups of the profiled tables, metadata-only lines, folded lines, unreadable files.
        `notes` (table -> column -> text) end the column lines they name (`data.schema_groups`)."""
        fold = set(folded)
        blocks = render_groups(self.groups(fold), self.schema_format, notes, db_id=self.db_id,
                               measure=estimate_tokens)
        blocks += [one_line(e.info, e.note) for e in self.entries if e.profile is None and e.name not in fold]
        folded_entries = [e for e in self.entries if e.name in fold]
        if folded_entries:
            blocks.append(FOLDED_HEADING + "\n" + "\n".join(_folded_lines(folded_entries)))
        if self.skipped:
            blocks.append("Not readable:\n" + "\n".join(f"  - {s}" for s in self.skipped))
        if self.notes:
            blocks.append("Load notes:\n" + "\n".join(f"  - {s}" for s in self.notes))
        return "\n\n".join(blocks) if blocks else "(no readable tables)"


def digest_tables(catalog: Catalog, *, max_rows: int = 500_000, max_chars: int = 30_000,
                  schema_format: SchemaFormat = "profile", db_id: str = "") -> TableDigest:
    """Profile the catalog's tables (bounded work: big tables and those past `max_chars` of
    profile text are listed from metadata), plus the files that could not be read. A format other
    than the profile text shows several sample values: the same scan takes text columns' extremes."""
    entries: list[TableEntry] = []
    used = 0
    infos = catalog.tables()
    _load_together(catalog, [i for i in infos if i.rows is None or i.rows <= max_rows], max_chars)
    for info in infos:
        if info.rows is not None and info.rows > max_rows:
            entries.append(TableEntry(info, note="large: not profiled, use \\schema"))
            continue
        if used >= max_chars:
            entries.append(TableEntry(info, note="not profiled to save time, use \\schema"))
            continue
        profile, problem = _profile(catalog, info, extremes=schema_format != "profile")
        if profile is None:
            entries.append(TableEntry(info, note=f"could not be profiled ({problem}), see \\schema"))
            continue
        used += len(profile.render()) + 2
        entries.append(TableEntry(info, profile))
    skipped = tuple(escape_breaks(f"{s.path}: {s.reason}") for s in catalog.skipped)
    return TableDigest(tuple(entries), skipped, tuple(escape_breaks(n.line()) for n in catalog.notes),
                       schema_format, db_id)


def one_line(info: TableInfo, why: str = "", columns_as: str | None = None) -> str:
    """`name: ~rows rows, from file [why]; columns: a, b, c` (no loading needed)."""
    rows = info.rows_label
    head = f"{info.name}: {rows} rows, {source_text(info.name, info.source_file, info.origin)}"
    if why:
        head += f" [{why}]"
    if columns_as is not None:
        return head + f"; columns as {columns_as}"
    columns = info.columns or []
    shown = clip_names([escape_breaks(c) for c in columns], MAX_COLUMNS_LISTED)
    return head + (f"; columns: {shown}" if columns else "")


def _folded_lines(entries: list[TableEntry]) -> list[str]:
    """One line per folded table; a column list already given names the first table that had it."""
    first_with: dict[tuple[str, ...], str] = {}
    lines = []
    for entry in entries:
        columns = [c.name for c in entry.profile.columns] if entry.profile is not None else entry.info.columns
        key = tuple(columns or [])
        same = first_with.get(key) if key else None
        info = entry.info
        if entry.profile is not None:  # the profile counted the rows and read the columns
            info = dataclasses.replace(info, rows=entry.profile.rows, rows_exact=True,
                                       columns=[c.name for c in entry.profile.columns])
        lines.append("  - " + one_line(info, entry.note, columns_as=same))
        if key and same is None:
            first_with[key] = entry.name
    return lines


def _load_together(catalog: Catalog, candidates: list[TableInfo], max_chars: int) -> None:
    """Load in one go the tables that will be profiled: each load opens and closes a loader
    connection (a checkpoint), and one load per table cost ~0.35 CPU-s per dev task (7 tables).

    Tables past a generous estimate of the profile text's `max_chars` load one by one as they are
    profiled, as before. A failed or stopped load changes nothing: profiling loads (and reports)
    each table again.
    """
    names, estimate = [], 0
    for info in candidates:
        if estimate >= max_chars:
            break
        names.append(info.name)
        estimate += _PROFILE_HEAD_CHARS + len(info.name) + len(info.source_file) + sum(
            _PROFILE_LINE_CHARS + len(c) for c in info.columns or ["?"] * _UNKNOWN_COLUMNS)
    if len(names) > 1:
        try:
            catalog.load(names)
        except DataError:
            pass  # profile_table loads each table again and its error becomes that table's note


def _profile(catalog: Catalog, info: TableInfo, *, extremes: bool) -> tuple[TableProfile | None, str | None]:
    """(profile, None) or (None, why it failed). A table that cannot be profiled must not cost
    the task its prompt; the reason is shown and `\\schema` gives the model the details."""
    try:
        return profile_table(catalog, info.name, extremes=extremes), None
    except DataError as exc:  # the engine's errors only (a raw DuckDB error is wrapped by the engine)
        return None, f"{type(exc).__name__}: {clip(str(exc), 200)}"
