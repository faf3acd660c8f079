"""Markdown pipe tables: parsing rules, merging continued tables, naming, locations."""

from __future__ import annotations

import pytest

from datasolver.data.pipe_tables import find_pipe_tables, split_row
from datasolver.documents.markdown import extract_markdown, format_ranges, unique_columns

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

DOC = """# Offices

Some prose | with a pipe that is not a table.

| name | staff | note |
|:-----|------:|:----:|
| Berlin | 120 | **main** |
| Lyon | 80 | a \\| b |

Filler text between the two halves.

| name | staff | note |
|---|---|---|
| Oslo | 15 |  |

```
| code | not | data |
|---|---|---|
| 1 | 2 | 3 |
```

| k | v |
|---|---|
| a | 1 | extra |
| b |
"""


@pytest.mark.parametrize(
    ("line", "cells"),
    [
        ("| a | b |", ["a", "b"]),
        ("a | b", ["a", "b"]),
        ("| a \\| b | c |", ["a | b", "c"]),
        ("|  | x |", ["", "x"]),
        ("| **bold** | `code` | x<br>y |", ["bold", "code", "x y"]),
    ],
)
def test_split_row(line: str, cells: list[str]) -> None:
    assert split_row(line) == cells


def test_find_tables_skips_prose_and_fenced_code() -> None:
    tables = find_pipe_tables(DOC.split("\n"))
    assert [t.header for t in tables] == [["name", "staff", "note"], ["name", "staff", "note"], ["k", "v"]]
    assert (tables[0].first_line, tables[0].last_line) == (5, 8)
    assert tables[0].rows == [["Berlin", "120", "main"], ["Lyon", "80", "a | b"]]


def test_extract_merges_continued_tables_and_pads_ragged_rows() -> None:
    tables, warnings = extract_markdown(DOC)
    assert len(tables) == 2
    offices, kv = tables
    assert offices.rows[-1] == ["Oslo", "15", ""]
    assert offices.location == "lines 5-8, 12-14"
    assert offices.method == "markdown-table"
    assert kv.rows == [["a", "1"], ["b", ""]]
    assert any("2 row(s)" in w for w in warnings)


def test_header_only_table_is_skipped_with_a_warning() -> None:
    tables, warnings = extract_markdown("| a | b |\n|---|---|\n\ntext\n")
    assert tables == []
    assert "no rows" in warnings[0]


def test_unique_columns_fills_blanks_and_dedupes_case_insensitively() -> None:
    assert unique_columns(["a", "", "A", "a"]) == ["a", "column1", "A_1", "a_2"]


@pytest.mark.parametrize(
    ("ranges", "unit", "text"),
    [
        ([(7, 414)], "lines", "lines 7-414"),
        ([(3, 3)], "pages", "page 3"),
        ([(2, 2), (3, 3), (5, 5)], "pages", "pages 2-3, 5"),
    ],
)
def test_format_ranges(ranges: list[tuple[int, int]], unit: str, text: str) -> None:
    assert format_ranges(ranges, unit) == text
