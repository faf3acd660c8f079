"""Document tables from Markdown: pipe tables (read by `data.pipe_tables`) merged, named and located."""

from __future__ import annotations

from datasolver.data.names import unique_names
from datasolver.data.pipe_tables import PipeTable, find_pipe_tables
from datasolver.documents.records import ExtractedTable


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
        refused = [t.refused for t in group if t.refused]
        if refused:
            warnings.append(f"{location}: not read as a table: {refused[0]}")
            continue
        ragged = sum(t.ragged_rows for t in group)
        if ragged:
            warnings.append(f"{location}: {ragged} row(s) had a different cell count than the header (padded/cut)")
        if not rows:
            warnings.append(f"{location}: table has a header but no rows; skipped")
            continue
        tables.append(ExtractedTable(unique_columns(group[0].header), rows, location, "markdown-table"))
    return tables, warnings
