"""Compact profile text for prompts: tables that share one schema are described once.

A group is two or more profiled tables with the same columns and types in the same order
(monthly or per-district tables). The group's column lines give statistics over all its
tables; each table then gets one line with what differs: name, rows, source, and the values of
the columns that are constant inside it (its district, its month). A column line omits what
carries no information: a 1-distinct column shows its value instead of a range, a column
without NULLs says nothing about NULLs (the table header says "no NULLs" once).

A caller may attach a note to a column (its meaning, from the task's documentation): it ends the
column's line as ` — note`. A group's column line carries a note only when every table of the
group has that same note (`shared_notes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation

from datasolver.data.profile import ColumnProfile, TableProfile, is_ranged
from datasolver.data.results import cell_text, escape_breaks

EXAMPLE_CHARS = 40
CONSTANT_CHARS = 60
NOTE_SEPARATOR = " — "
LONG_DIGITS = 6  # a floating-point bound with more significant digits than this is rounded outward
RANGE_DIGITS = 4  # to this many

ColumnNotes = Mapping[str, Mapping[str, str]]  # table name -> column name -> note


@dataclass(frozen=True)
class SchemaGroup:
    """Tables with identical (column, type) lists, in first-seen order; one table is a group of one."""

    columns: tuple[tuple[str, str], ...]
    tables: tuple[TableProfile, ...]


def group_by_schema(profiles: Sequence[TableProfile]) -> list[SchemaGroup]:
    """Profiles grouped by their exact (column, type) list; groups in order of first appearance."""
    order: dict[tuple[tuple[str, str], ...], list[TableProfile]] = {}
    for profile in profiles:
        key = tuple((c.name, c.type) for c in profile.columns)
        order.setdefault(key, []).append(profile)
    return [SchemaGroup(key, tuple(members)) for key, members in order.items()]


def constant_value(column: ColumnProfile) -> str | None:
    """The single value of a column with one distinct value and no NULLs, else None."""
    if column.distinct == 1 and column.nulls == 0 and column.example is not None:
        return cell_text(column.example, CONSTANT_CHARS)
    return None


def column_line(column: ColumnProfile, rows: int, note: str = "") -> str:
    """`name TYPE, 3 distinct, 1.5 .. 9, 2 NULL` with the uninformative parts left out (and ` — note`)."""
    return _with_note(_column_stats(column, rows), note)


def _with_note(line: str, note: str) -> str:
    return f"{line}{NOTE_SEPARATOR}{note}" if note else line


def _column_stats(column: ColumnProfile, rows: int) -> str:
    parts = [f"{escape_breaks(column.name)} {column.type}"]
    constant = constant_value(column)
    if constant is not None:
        parts.append(f"= {constant}")
        return ", ".join(parts)
    if column.distinct == 0:
        parts.append("all NULL")
        return ", ".join(parts)
    parts.append("unique" if column.distinct == rows and column.nulls == 0 else f"{column.distinct} distinct")
    if column.min is not None and column.min != column.max:
        parts.append(f"{outward(column.min, column.type, up=False)} .. {outward(column.max, column.type, up=True)}")
    elif column.example is not None:
        parts.append(f"e.g. {cell_text(column.example, EXAMPLE_CHARS)}")
    if column.nulls:
        parts.append(f"{column.nulls} NULL")
    return ", ".join(parts)


def source_text(name: str, source_file: str, origin: str | None = None) -> str:
    """`from db/x.db`, or just `in csv/` when the file is named after the table (`csv/name.csv`)."""
    folder, _, file_name = source_file.rpartition("/")
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    text = f"in {escape_breaks(folder)}/" if folder and stem == name else f"from {escape_breaks(source_file)}"
    return text + (f" ({origin})" if origin else "")


def table_header(profile: TableProfile) -> str:
    """`name: 12 rows, from db/x.db (origin); no NULLs`."""
    head = f"{profile.name}: {profile.rows} rows, {source_text(profile.name, profile.source_file, profile.origin)}"
    if not any(c.nulls for c in profile.columns):
        head += "; no NULLs"
    return head


def render_single(profile: TableProfile, notes: Mapping[str, str] | None = None) -> str:
    """One table: its header, then one compact line per column (with its note, if any)."""
    notes = notes or {}
    return "\n".join([table_header(profile)]
                     + [f"  {column_line(c, profile.rows, notes.get(c.name, ''))}" for c in profile.columns])


def shared_notes(group: SchemaGroup, notes: ColumnNotes | None) -> dict[str, str]:
    """Column -> note for the columns that every table of the group has the same note for."""
    if not notes:
        return {}
    shared = {}
    for name, _ in group.columns:
        found = {(notes.get(t.name) or {}).get(name) for t in group.tables}
        if len(found) == 1 and (note := found.pop()):
            shared[name] = note
    return shared


def render_group(group: SchemaGroup, notes: ColumnNotes | None = None, measure: Callable[[str], int] = len) -> str:
    """A group of one renders as a single table; larger groups as one schema block plus a line per
    table. A column's line ends with its note when the group's tables share it (`shared_notes`).
    `measure` (characters, or a caller's token estimate) picks the shorter form of the table lines."""
    shared = shared_notes(group, notes)
    if len(group.tables) == 1:
        return render_single(group.tables[0], shared)
    count = len(group.tables)
    every_constant = {
        name for name, _ in group.columns
        if all(constant_value(_column(t, name)) is not None for t in group.tables)
    }
    lines = [f"These {count} tables share one schema (statistics over all {count}):"]
    for index, (name, ctype) in enumerate(group.columns):
        if name in every_constant:
            line = f"{escape_breaks(name)} {ctype}, one value per table"
        else:
            line = _merged_line(name, ctype, [t.columns[index] for t in group.tables])
        lines.append("  " + _with_note(line, shared.get(name, "")))
    # The values of the columns constant in every table: `name=value` on each table's line, or,
    # when shorter, the names once in a legend and the values alone (in column order).
    named = ["  - " + member_line(table) for table in group.tables]
    constants = [name for name, _ in group.columns if name in every_constant]
    legend = [f"  tables (name: rows, source; {' | '.join(escape_breaks(c) for c in constants)}):"] if constants else []
    legend += ["  - " + member_line(table, constants) for table in group.tables]
    shorter = legend if constants and measure("\n".join(legend)) < measure("\n".join(named)) else named
    return "\n".join(lines + shorter)


def member_line(profile: TableProfile, positional: Sequence[str] = ()) -> str:
    """`name: 14 rows, from db/x.db; 区域=南京市建邺区, 年月=2019年02月` (constant columns only);
    the `positional` columns' values come first, alone, joined by ` | `."""
    head = f"{profile.name}: {profile.rows} rows, {source_text(profile.name, profile.source_file, profile.origin)}"
    values = {c.name: value for c in profile.columns if (value := constant_value(c)) is not None}
    parts = []
    if positional:
        parts.append(" | ".join(values[name] for name in positional))
    others = [f"{escape_breaks(name)}={value}" for name, value in values.items() if name not in positional]
    if others:
        parts.append(", ".join(others))
    return head + "".join(f"; {part}" for part in parts)


def _column(profile: TableProfile, name: str) -> ColumnProfile:
    return next(c for c in profile.columns if c.name == name)


def _merged_line(name: str, ctype: str, columns: list[ColumnProfile]) -> str:
    parts = [f"{escape_breaks(name)} {ctype}"]
    most = max(c.distinct for c in columns)
    parts.append(f"≤{most} distinct")
    low, high = _merged_range(ctype, columns)
    if low is not None and low != high:
        parts.append(f"{outward(low, ctype, up=False)} .. {outward(high, ctype, up=True)}")
    else:
        example = next((c.example for c in columns if c.example is not None), None)
        if example is not None:
            parts.append(f"e.g. {cell_text(example, EXAMPLE_CHARS)}")
    nulls = sum(c.nulls for c in columns)
    if nulls:
        parts.append(f"{nulls} NULL in all")
    return ", ".join(parts)


def outward(text: str, ctype: str, *, up: bool) -> str:
    """A bound of a floating-point range with more than LONG_DIGITS significant digits, rounded
    away from the range's inside (floor for the min, ceiling for the max) to RANGE_DIGITS digits,
    integer digits never rounded off: still a true bound, without 16 digits of noise. Any other
    bound (integers, dates, short decimals, text that is no number) as it is."""
    if not ctype.upper().startswith(("DOUBLE", "FLOAT", "REAL")):
        return text
    try:
        value = Decimal(text)
    except InvalidOperation:
        return text
    if not value.is_finite() or len(value.as_tuple().digits) <= LONG_DIGITS:
        return text
    exponent = min(value.adjusted() - RANGE_DIGITS + 1, 0)
    rounded = value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return format(rounded, "f")


def _merged_range(ctype: str, columns: list[ColumnProfile]) -> tuple[str | None, str | None]:
    """The smallest min and largest max over the tables, compared as numbers for numeric types."""
    if not is_ranged(ctype):
        return None, None
    lows = [c.min for c in columns if c.min is not None]
    highs = [c.max for c in columns if c.max is not None]
    if not lows or not highs:
        return None, None
    key = _number if not ctype.upper().startswith(("DATE", "TIMESTAMP")) else str
    try:
        return min(lows, key=key), max(highs, key=key)
    except ValueError:  # a value that is not a number after all: compare as text
        return min(lows), max(highs)


def _number(text: str) -> float:
    return float(text)
