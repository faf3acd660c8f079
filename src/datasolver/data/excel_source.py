"""Workbooks (.xlsx, .xlsm, .xls, .ods): each sheet is one table, read with python-calamine.

Why calamine: a Rust reader behind a small wheel with no dependencies, maintained (pandas offers
it as its `calamine` engine), and it runs no macro and parses no XML in Python. openpyxl, the
other maintained choice, is pure Python (an order of magnitude slower on big sheets) and reads
only .xlsx.

The first row of a sheet is its header (blank names become column<N>, repeats get suffixes).
Cells keep their types: numbers, booleans; dates and date-times become ISO text, and every text
column is typed by the same rules as CSV text (so `2024-01-02` cells make a DATE column). An
.xlsx/.xlsm/.ods file is a zip: its members may expand to at most MAX_UNZIPPED_BYTES in all,
checked from the zip's directory before any member is parsed (a zip bomb is a note, not a crash).
"""

from __future__ import annotations

import datetime as dt
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from datasolver.data.arrow_columns import table_from_columns
from datasolver.data.errors import SourceSkipped
from datasolver.data.names import unique_names, unquoted_note, without_quote_pair
from datasolver.data.title_lines import MAX_TITLE_LINES, header_index, is_number, title_lines_note
from datasolver.sizes import human_size

MAX_UNZIPPED_BYTES = 1 << 30


@dataclass
class SheetTable:
    table: pa.Table
    infer: list[str]
    notes: list[str] = field(default_factory=list)


def _check_zip(path: Path) -> None:
    if not zipfile.is_zipfile(path):
        return  # .xls: the older binary format, not a zip
    try:
        with zipfile.ZipFile(path) as archive:
            unzipped = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceSkipped(f"not a readable workbook ({exc})") from exc
    if unzipped > MAX_UNZIPPED_BYTES:
        raise SourceSkipped(f"not read: the workbook would expand to {human_size(unzipped)}, over the "
                            f"{human_size(MAX_UNZIPPED_BYTES)} a workbook may")


def _workbook(path: Path):  # noqa: ANN202 - calamine's type
    from python_calamine import CalamineWorkbook

    _check_zip(path)
    try:
        return CalamineWorkbook.from_path(str(path))
    except Exception as exc:  # noqa: BLE001 - calamine's errors (zip, XML, password) are one note
        raise SourceSkipped(f"not a readable workbook ({type(exc).__name__}: {str(exc)[:200]})") from exc


def sheet_names(path: Path) -> list[str]:
    """The workbook's sheet names, in workbook order (no cell is read)."""
    return list(_workbook(path).sheet_names)


def _cell(value: object) -> object:
    if value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # Excel stores every number as a float; whole ones are integers to people
    return value


def read_sheet(path: Path, sheet: str, header_row: int | None = None) -> SheetTable:
    """One sheet's rows: the first row names the columns, unless title rows stand above the header
    (`title_lines`) or `header_row` (1-based, within the sheet's used area) says where it is."""
    try:
        rows = _workbook(path).get_sheet_by_name(sheet).to_python(skip_empty_area=True)
    except SourceSkipped:
        raise
    except Exception as exc:  # noqa: BLE001 - calamine's errors are one note
        raise SourceSkipped(f"sheet {sheet!r} could not be read ({type(exc).__name__}: {str(exc)[:200]})") from exc
    if not rows:
        return SheetTable(pa.table({}), [], [f"sheet {sheet!r} is empty"])
    notes: list[str] = []
    first = header_row - 1 if header_row else _header_index(rows)
    if first:
        above = " ".join(str(_cell(v)) for v in rows[0] if _cell(v) is not None)[:80]
        if header_row is None:
            notes.append(title_lines_note(first, above, "row"))
        rows = rows[first:]
        if not rows:
            return SheetTable(pa.table({}), [], [f"sheet {sheet!r} has no row {first + 1}"])
    width = max(len(r) for r in rows)
    header = [str(_cell(v) if _cell(v) is not None else "") for v in rows[0]] + [""] * (width - len(rows[0]))
    bare = [without_quote_pair(name) for name in header]
    if quoted := [name for name, plain in zip(header, bare) if name != plain]:
        notes.append(unquoted_note(quoted))
    names = unique_names(bare)
    columns: list[list[object]] = [[] for _ in names]
    for row in rows[1:]:
        for i in range(width):
            columns[i].append(_cell(row[i]) if i < len(row) else None)
    text = table_from_columns(names, columns)
    return SheetTable(text.table, text.infer, notes)


def _header_index(rows: list[list[object]]) -> int:
    head = [[c for c in map(_cell, row) if c is not None] for row in rows[:MAX_TITLE_LINES + 60]]
    return header_index([len(cells) for cells in head],
                        [bool(cells) and all(isinstance(c, str) and not is_number(c) for c in cells) for cells in head])
