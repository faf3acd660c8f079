"""How one schema group (`data.schema_groups`) is written in the prompt: three formats.

`profile` is the compact profile text of `schema_groups.render_group` (the default). The other two
are the formats the text-to-SQL literature reports for small models, written from the same profile
(no second scan; the profile's example, its range, and with `profile_table(..., extremes=True)` the
smallest and largest value of a text column are the sample values):

- `create_table`: a DuckDB `CREATE TABLE` statement per table, each column with its type and up to
  SAMPLES distinct values as a comment, the row count in a comment above (Rajkumar et al. 2022, the
  "CREATE TABLE with sample values" prompts of DIN-SQL and others);
- `mschema`: XiYan-SQL's M-Schema (Gao et al. 2024): a `【DB_ID】` line and `【Schema】`, per table
  `# Table: name` and `(column:TYPE, note, Examples: [v1, v2])` lines, then `【Foreign keys】`: the
  columns that two tables shown in full share by name, named as a key (`data.joins.key_like`) and of
  compatible types. A name-based guess, as `\\joins` lists candidates; the section is left out when
  no column qualifies.

Only a group's entry changes: which tables are shown in full or folded, their order, same-schema
groups and the token budget are the caller's (`agent.tables.TableDigest`). A group of several
tables is one statement (or one column list) followed by the tables' own lines (rows, source, the
values constant in each), as in the profile format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, get_args

from datasolver.data.joins import compatible_types, key_like
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.profile import ColumnProfile, TableProfile
from datasolver.data.results import CUT_MARKER, cell_text, escape_breaks
from datasolver.terminal import printable
from datasolver.data.schema_groups import (
    EXAMPLE_CHARS,
    NOTE_SEPARATOR,
    ColumnNotes,
    SchemaGroup,
    constant_value,
    member_line,
    render_group,
    shared_notes,
    table_header,
)

SchemaFormat = Literal["profile", "create_table", "mschema"]
SCHEMA_FORMATS: tuple[SchemaFormat, ...] = get_args(SchemaFormat)
SAMPLES = 3  # distinct sample values per column
MAX_FOREIGN_KEYS = 12  # lines of M-Schema's foreign-key section
_UNQUOTED = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
             "UBIGINT", "DOUBLE", "FLOAT", "REAL", "DECIMAL", "BOOLEAN")
ONE_PER_TABLE = "one value per table"


def render_groups(groups: Sequence[SchemaGroup], schema_format: SchemaFormat, notes: ColumnNotes | None = None, *,
                  db_id: str = "", measure: Callable[[str], int] = len) -> list[str]:
    """The blocks that describe `groups` in `schema_format` (the caller joins them with a blank line;
    M-Schema is one block)."""
    if schema_format == "create_table":
        return [create_table_text(g, shared_notes(g, notes)) for g in groups]
    if schema_format == "mschema":
        if not groups:
            return []
        lines = ([f"【DB_ID】 {escape_breaks(db_id)}"] if db_id else []) + ["【Schema】"]
        lines += [mschema_text(g, shared_notes(g, notes)) for g in groups]
        keys = foreign_keys(groups)
        return ["\n".join(lines + (["【Foreign keys】", *keys] if keys else []))]  # one block, as M-Schema is written
    return [render_group(g, notes, measure) for g in groups]


def sample_values(columns: Sequence[ColumnProfile]) -> list[str]:
    """Up to SAMPLES distinct values of a column (of each table of a group, in turn), as text: the
    first in file order, then the smallest and the largest."""
    seen: list[str] = []
    for column in columns:
        for value in (column.example, column.min, column.max, *column.extremes):
            if value is not None and value not in seen:
                seen.append(value)
    return seen[:SAMPLES]


def _literal(value: str, column_type: str) -> str:
    """A sample as SQL writes it (numbers and booleans bare, anything else quoted), on one line and
    clipped to EXAMPLE_CHARS."""
    text = printable(escape_breaks(value))
    text = text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS] + CUT_MARKER
    return text if column_type.upper().startswith(_UNQUOTED) else quote_literal(text)


def _per_table_constant(group: SchemaGroup) -> set[str]:
    """The columns constant inside every table of a group of several (their values are on the tables' lines)."""
    if len(group.tables) < 2:
        return set()
    return {name for index, (name, _) in enumerate(group.columns)
            if all(constant_value(t.columns[index]) is not None for t in group.tables)}


def _members(group: SchemaGroup, prefix: str) -> list[str]:
    count = len(group.tables)
    return [f"{prefix}These {count} tables share one schema, written once (name: rows, source; its constant values):"
            ] + [f"{prefix}  {member_line(t)}" for t in group.tables]


def create_table_text(group: SchemaGroup, notes: dict[str, str]) -> str:
    """`-- name: rows, source` then `CREATE TABLE "name" ( "col" TYPE, -- e.g. 'v1', 'v2' … );`;
    a group of several: its tables' lines as comments, one statement named as its first table."""
    first = group.tables[0]
    head = [f"-- {table_header(first)}"] if len(group.tables) == 1 else _members(group, "-- ")
    constant = _per_table_constant(group)
    lines = []
    for index, (name, ctype) in enumerate(group.columns):
        comma = "," if index < len(group.columns) - 1 else ""
        column = f"  {quote_ident(escape_breaks(name))} {ctype}{comma}"
        comment = _sample_comment([t.columns[index] for t in group.tables], ctype, name in constant)
        note = notes.get(name, "")
        if note:
            comment = f"{comment}{NOTE_SEPARATOR}{note}" if comment else note
        lines.append(f"{column} -- {comment}" if comment else column)
    return "\n".join(head + [f"CREATE TABLE {quote_ident(first.name)} ("] + lines + [");"])


def _sample_comment(columns: list[ColumnProfile], ctype: str, per_table: bool) -> str:
    if per_table:
        return ONE_PER_TABLE
    if len(columns) == 1 and (only := constant_value(columns[0])) is not None:
        return f"always {_literal(only, ctype)}"
    samples = sample_values(columns)
    if not samples:
        return "all NULL"
    return "e.g. " + ", ".join(_literal(v, ctype) for v in samples)


def mschema_text(group: SchemaGroup, notes: dict[str, str]) -> str:
    """`# Table: name` then `[`, one `(column:TYPE, note, Examples: [v1, v2])` line per column, `]`;
    a group of several: `# Table: a, b, …` and its tables' lines."""
    names = ", ".join(t.name for t in group.tables)
    head = [f"# Table: {names}"] + (_members(group, "# ") if len(group.tables) > 1 else [])
    constant = _per_table_constant(group)
    fields = []
    for index, (name, ctype) in enumerate(group.columns):
        parts = [f"{escape_breaks(name)}:{ctype}"]
        if notes.get(name):
            parts.append(notes[name])
        if name in constant:
            parts.append(ONE_PER_TABLE)
        elif samples := sample_values([t.columns[index] for t in group.tables]):
            parts.append(f"Examples: [{', '.join(cell_text(v, EXAMPLE_CHARS) for v in samples)}]")
        fields.append("(" + ", ".join(parts) + ")")
    return "\n".join(head + ["[", ",\n".join(fields), "]"])


def foreign_keys(groups: Sequence[SchemaGroup]) -> list[str]:
    """`a.col=b.col` for each column two tables of different groups share by name (case aside), named
    as a key and of compatible types; at most MAX_FOREIGN_KEYS lines, in the tables' order."""
    tables: list[tuple[int, TableProfile]] = [(i, t) for i, g in enumerate(groups) for t in g.tables]
    lines: list[str] = []
    for position, (group_a, a) in enumerate(tables):
        for group_b, b in tables[position + 1:]:
            if group_a == group_b:
                continue
            b_columns = {c.name.casefold(): c for c in b.columns}
            for column in a.columns:
                other = b_columns.get(column.name.casefold())
                if other is not None and key_like(column.name) and compatible_types(column.type, other.type):
                    lines.append(f"{a.name}.{escape_breaks(column.name)}={b.name}.{escape_breaks(other.name)}")
    return lines[:MAX_FOREIGN_KEYS]
