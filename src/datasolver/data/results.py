"""Query results and their compact text form for tools and people."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datasolver.data.load_notes import LoadNote

CUT_MARKER = "…[cut]"


@dataclass
class TableInfo:
    """What a listing shows about one table. `rows` is None when unknown without loading."""

    name: str
    kind: str
    source_file: str
    source_name: str
    rows: int | None
    columns: list[str] | None
    aliases: list[str] = field(default_factory=list)
    origin: str | None = None
    loaded: bool = False
    rows_exact: bool = True

    @property
    def rows_label(self) -> str:
        """The row count as every listing shows it: `120`, `~120` (an estimate) or `?` (unknown)."""
        if self.rows is None:
            return "?"
        return str(self.rows) if self.rows_exact else f"~{self.rows}"


@dataclass
class QueryResult:
    """The first rows of a result, the total row count and any SQL rewrites applied."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    total_rows: int
    rewrites: list[str] = field(default_factory=list)
    sql: str = ""
    notes: list[LoadNote] = field(default_factory=list)
    """What loading said about the tables the query read (see load_notes.py)."""


def cell_text(value: Any, max_chars: int = 200) -> str:
    if value is None:
        return "NULL"
    text = str(value).replace("\r\n", "\\n").replace("\n", "\\n").replace("\t", " ")
    return text if len(text) <= max_chars else text[:max_chars] + CUT_MARKER


def render_result(result: QueryResult, max_cell_chars: int = 200) -> str:
    """`rows: R of T` first, then a tab-separated header and rows; rewrites noted at the end."""
    lines = [f"rows: {len(result.rows)} of {result.total_rows}"]
    lines.append("\t".join(result.columns))
    for row in result.rows:
        lines.append("\t".join(cell_text(v, max_cell_chars) for v in row))
    if result.rewrites:
        lines.append("note: SQL rewritten before it ran: " + "; ".join(result.rewrites))
    return "\n".join(lines)


def render_describe(info: TableInfo, columns: list[tuple[str, str]], rows: list[tuple], total: int) -> str:
    head = f"table {info.name} ({total} rows) from {info.source_file}"
    if info.aliases:
        head += f"; aliases: {', '.join(info.aliases)}"
    if info.origin:
        head += f"; origin: {info.origin}"
    lines = [head, "columns:"]
    lines += [f"  {name}  {ctype}" for name, ctype in columns]
    lines.append(f"sample rows ({len(rows)}):")
    lines.append("\t".join(name for name, _ in columns))
    lines += ["\t".join(cell_text(v, 80) for v in row) for row in rows]
    return "\n".join(lines)
