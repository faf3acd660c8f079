"""Markdown pipe tables (GFM style) found in text, with their line ranges."""

from __future__ import annotations

import re
from dataclasses import dataclass

from datasolver.data.names import unique_names
from datasolver.documents.model import ExtractedTable

_DELIM_CELL = re.compile(r"^\s*:?-+:?\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_WRAP = re.compile(r"^(\*\*|__|`)(.+)\1$")


@dataclass
class PipeTable:
    """One pipe table: cells as text, 1-based inclusive line numbers of header and last row."""

    header: list[str]
    rows: list[list[str]]
    first_line: int
    last_line: int
    ragged_rows: int = 0
    """Rows whose cell count differed from the header (padded or cut, as GFM renders them)."""


def split_row(line: str) -> list[str]:
    """Cells of one table line; `\\|` is a literal pipe, outer pipes are optional."""
    s = line.strip()
    cells: list[str] = []
    buf: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] == "|":
            buf.append("|")
            i += 2
            continue
        if ch == "|":
            cells.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
        i += 1
    cells.append("".join(buf))
    # A leading/trailing pipe leaves an empty edge cell that is not data.
    if s.startswith("|"):
        cells = cells[1:]
    if s.endswith("|") and not s.endswith("\\|") and cells:
        cells = cells[:-1]
    return [clean_cell(c) for c in cells]


def clean_cell(cell: str) -> str:
    """Trim a cell and drop inline markup that only decorates the whole value."""
    c = _BR.sub(" ", cell).strip()
    m = _WRAP.match(c)
    if m:
        c = m.group(2).strip()
    return c


def _has_pipe(line: str) -> bool:
    return "|" in line.replace("\\|", "")


def _is_delimiter(line: str, n_cells: int) -> bool:
    if not _has_pipe(line) and n_cells > 1:
        return False
    cells = split_row(line)
    return len(cells) == n_cells and all(_DELIM_CELL.match(c) for c in cells)


def find_pipe_tables(lines: list[str]) -> list[PipeTable]:
    """Every pipe table in `lines`, skipping fenced code blocks (examples, not data)."""
    tables: list[PipeTable] = []
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)[0]
            fence = None if fence == marker else (fence or marker)
            i += 1
            continue
        if fence is not None or not _has_pipe(line) or i + 1 >= len(lines):
            i += 1
            continue
        header = split_row(line)
        if not _is_delimiter(lines[i + 1], len(header)):
            i += 1
            continue
        table = PipeTable(header=header, rows=[], first_line=i + 1, last_line=i + 2)
        j = i + 2
        # The body runs until a blank line or a line without a pipe (GFM).
        while j < len(lines) and lines[j].strip() and _has_pipe(lines[j]):
            cells = split_row(lines[j])
            if len(cells) != len(header):
                table.ragged_rows += 1
                cells = (cells + [""] * len(header))[: len(header)]
            table.rows.append(cells)
            table.last_line = j + 1
            j += 1
        tables.append(table)
        i = j
    return tables


def unique_columns(header: list[str]) -> list[str]:
    """Header names made non-empty and unique by the engine's own rule (`column<N>`, `name_1`)."""
    return unique_names([name.strip() for name in header])


def merge_continued(tables: list[PipeTable]) -> list[list[PipeTable]]:
    """Group consecutive tables with an identical header: a table continued after prose or a page break."""
    groups: list[list[PipeTable]] = []
    for t in tables:
        if groups and groups[-1][-1].header == t.header:
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def format_ranges(ranges: list[tuple[int, int]], unit: str) -> str:
    """`lines 7-414`, `pages 2-3, 5` or `page 4`; adjacent or overlapping ranges are merged."""
    merged: list[list[int]] = []
    for a, b in sorted(ranges):
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    parts = [f"{a}" if a == b else f"{a}-{b}" for a, b in merged]
    if len(merged) == 1 and merged[0][0] == merged[0][1]:
        unit = unit.removesuffix("s")
    return f"{unit} " + ", ".join(parts)


def extract_markdown(text: str) -> tuple[list[ExtractedTable], list[str]]:
    """Tables of a Markdown/text document (continued tables merged) and warnings about them."""
    tables: list[ExtractedTable] = []
    warnings: list[str] = []
    for group in merge_continued(find_pipe_tables(text.split("\n"))):
        rows = [r for t in group for r in t.rows]
        location = format_ranges([(t.first_line, t.last_line) for t in group], "lines")
        ragged = sum(t.ragged_rows for t in group)
        if ragged:
            warnings.append(f"{location}: {ragged} row(s) had a different cell count than the header (padded/cut)")
        if not rows:
            warnings.append(f"{location}: table has a header but no rows; skipped")
            continue
        tables.append(ExtractedTable(unique_columns(group[0].header), rows, location, "markdown-table"))
    return tables, warnings
