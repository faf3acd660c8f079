"""Markdown pipe tables (GFM style) found in text, with their line ranges: the one reader.

The documents room extracts data tables with it; knowledge.md's column lists (`data.knowledge_lists`),
the prompt's knowledge text (`agent.knowledge`) and `\\lint` read knowledge.md with it.

Rows shorter than the header are padded to its width, as GFM renders them; so a 12,000-column
header over one-cell rows asked for 12,000 x 12,000 cells (1.3 GB from 193 KB). A table is held
only within `input_limits.shape_refusal` (columns, and padding in proportion to the cells written):
past it the table keeps its header and lines, holds no rows, and `refused` says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from datasolver.data.input_limits import shape_refusal

_DELIM_CELL = re.compile(r"^\s*:?-+:?\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
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
    refused: str = ""
    """Why the rows were not kept (too wide, or mostly padding); "" for a table read whole."""


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


def _closed(line: str) -> bool:
    s = line.rstrip()
    return s.endswith("|") and not s.endswith("\\|")


def _is_delimiter(line: str, n_cells: int) -> bool:
    if not _has_pipe(line) and n_cells > 1:
        return False
    cells = split_row(line)
    return len(cells) == n_cells and all(_DELIM_CELL.match(c) for c in cells)


def find_pipe_tables(lines: list[str], *, broken_rows: bool = False) -> list[PipeTable]:
    """Every pipe table in `lines`, skipping fenced code blocks (examples, not data).

    With `broken_rows`, a table whose header ends with `|` reads a row that does not yet end with
    `|` on into the following lines (a cell with line breaks, as people paste a long value); without
    it a line without a pipe ends the table (GFM)."""
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
        table.refused = shape_refusal(0, len(header), 0) or ""
        joins = broken_rows and _closed(line)
        j, rows, written = i + 2, 0, 0
        # The body runs until a blank line or a line without a pipe (GFM).
        while j < len(lines) and lines[j].strip() and _has_pipe(lines[j]):
            row = lines[j]
            while joins and not _closed(row) and j + 1 < len(lines) and _continues(lines[j + 1]):
                j += 1
                row += " " + lines[j].strip()
            table.last_line = j + 1
            j += 1
            if table.refused:
                continue  # the body is passed over, not held
            cells = split_row(row)
            rows, written = rows + 1, written + min(len(cells), len(header))
            if len(cells) != len(header):
                table.ragged_rows += 1
                if refusal := shape_refusal(rows, len(header), written):
                    table.refused, table.rows = refusal, []
                    continue
                cells = (cells + [""] * len(header))[: len(header)]
            table.rows.append(cells)
        tables.append(table)
        i = j
    return tables


def _continues(line: str) -> bool:
    """Whether `line` can be the rest of a broken row: text, not a heading or a fence."""
    return bool(line.strip()) and not _HEADING.match(line) and not _FENCE.match(line)
