"""Table profiles for prompts: per column type, nulls, distinct count, an example, and a range."""

from __future__ import annotations

from dataclasses import dataclass, field

from datasolver.data.names import quote_ident
from datasolver.data.results import cell_text, escape_breaks

# count(DISTINCT) builds a hash table per column: a fixed ~2 ms each, most of a small table's
# profile. list_unique(list(col)) counts the same set (DuckDB's equality, NULLs left out) 5-12x
# cheaper up to ~10k rows and slower past ~20k (293 dev tables: 6.1 -> 0.5 CPU-s).
LIST_COUNT_MAX_ROWS = 10_000
_EXTREMES = ("VARCHAR", "BOOLEAN")
_RANGED = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "FLOAT", "DECIMAL", "DATE", "TIMESTAMP")


@dataclass
class ColumnProfile:
    name: str
    type: str
    nulls: int
    distinct: int
    example: str | None
    min: str | None = None
    max: str | None = None
    # The smallest and largest value of a text or boolean column, as text, only when asked
    # (`profile_table(..., extremes=True)`): sample values for the prompt formats that show several.
    extremes: tuple[str, ...] = ()


@dataclass
class TableProfile:
    name: str
    rows: int
    source_file: str
    columns: list[ColumnProfile] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    origin: str | None = None

    def render(self, max_example_chars: int = 40) -> str:
        """One header line, then one line per column."""
        head = f"{self.name}: {self.rows} rows, from {escape_breaks(self.source_file)}"
        if self.origin:
            head += f" ({self.origin})"
        lines = [head]
        for c in self.columns:
            parts = [c.type, "nullable" if c.nulls else "not null", f"{c.distinct} distinct"]
            if c.min is not None:
                parts.append(f"range {c.min} .. {c.max}")
            if c.example is not None:
                parts.append(f"e.g. {cell_text(c.example, max_example_chars)}")
            lines.append(f"  - {escape_breaks(c.name)}: " + ", ".join(parts))
        return "\n".join(lines)


def is_ranged(column_type: str) -> bool:
    """True for types whose profile carries a min/max range (numbers, dates, timestamps)."""
    return column_type.upper().startswith(_RANGED)


def has_extremes(column_type: str) -> bool:
    """True for the types `profile_table(..., extremes=True)` also takes the min and max of (text, booleans)."""
    return column_type.upper() in _EXTREMES


def profile_table(catalog, name: str, *, extremes: bool = False) -> TableProfile:
    """One scan of the table computes every column's counts; the catalog loads it if needed.
    With `extremes`, the same scan takes the min and max of each text and boolean column too."""
    table = catalog.resolve(name)
    described = catalog.column_types(table)  # loads the table
    info = catalog.table(table)
    small = info.rows is not None and info.rows <= LIST_COUNT_MAX_ROWS
    parts = ["count(*)"]
    for column, ctype in described:
        ident = quote_ident(column)
        distinct = f"list_unique(list({ident}))" if small else f"count(DISTINCT {ident})"
        # The first non-NULL value in file order: any_value() differs from run to run on a parallel
        # scan, and the prompt (and a replayed run) must not.
        parts += [f"count({ident})", distinct,
                  f"CAST(arg_min({ident}, rowid) FILTER (WHERE {ident} IS NOT NULL) AS VARCHAR)"]
        if is_ranged(ctype) or (extremes and has_extremes(ctype)):
            parts += [f"CAST(min({ident}) AS VARCHAR)", f"CAST(max({ident}) AS VARCHAR)"]
    row = catalog.own_rows(f"SELECT {', '.join(parts)} FROM {quote_ident(table)}")[0]
    total, pos, columns = row[0], 1, []
    for column, ctype in described:
        non_null, distinct, example = row[pos : pos + 3]
        pos += 3
        low = high = None
        bounds: tuple[str, ...] = ()
        if is_ranged(ctype):
            low, high = row[pos : pos + 2]
            pos += 2
        elif extremes and has_extremes(ctype):
            bounds = tuple(v for v in row[pos : pos + 2] if v is not None)
            pos += 2
        columns.append(ColumnProfile(column, ctype, total - non_null, distinct, example, low, high, bounds))
    return TableProfile(table, total, info.source_file, columns, info.aliases, info.origin)


def render_profiles(catalog, names: list[str] | None = None) -> str:
    """Compact descriptions of the given tables (all readable tables when None)."""
    names = names if names is not None else catalog.names()
    return "\n\n".join(profile_table(catalog, n).render() for n in names)
