"""A large prediction.csv read by Arrow's CSV reader (threaded, in C++) instead of row by row in
Python: its shape, non-null counts, first rows and, when asked, its distinct rows.

Only for files that read as one clean table. A row whose field count differs from the header,
bytes that are not UTF-8, a blank line, a header with a line break in it or a repeated name, and a
one-column file give None, and the caller reads the file the strict Python way, which says exactly
what is wrong.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pa_csv

_BOM = b"\xef\xbb\xbf"
# A blank line is a zero-field row to Python's csv (and the scorer), a row of empty values to Arrow.
# Inside a quoted value it is neither, but then the slow path only costs time.
_BLANK_LINES = (b"\n\n", b"\r\r", b"\n\r\n")


@dataclass
class ArrowRead:
    columns: list[str]
    n_rows: int
    non_null: list[int]
    first_rows: list[list[str]]
    distinct_rows: int | None


def read_clean_table(data: bytes, *, first_rows: int, null_like: frozenset[str],
                     count_distinct: bool) -> ArrowRead | None:
    """`data` (a whole CSV file) as counts, or None when it is not one clean table (see above)."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if any(blank in data for blank in _BLANK_LINES):
        return None
    try:
        header = next(csv.reader(io.StringIO(data[:1 << 16].decode("utf-8", errors="replace"))), None)
    except csv.Error:
        return None
    if (not header or len(header) < 2 or len(set(header)) != len(header)
            or any("\n" in name or "\r" in name for name in header)):
        return None
    names = [f"c{i}" for i in range(len(header))]
    try:
        table = pa_csv.read_csv(
            pa.BufferReader(data),
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1, use_threads=True),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    nulls = pa.array(sorted(null_like), pa.string())
    non_null = []
    for column in table.columns:
        normalized = pc.utf8_lower(pc.utf8_trim_whitespace(column))
        non_null.append(table.num_rows - pc.sum(pc.is_in(normalized, value_set=nulls)).as_py() if table.num_rows else 0)
    rows = [list(r.values()) for r in table.slice(0, first_rows).to_pylist()]
    distinct = table.group_by(names).aggregate([]).num_rows if count_distinct and table.num_rows else None
    return ArrowRead(header, table.num_rows, non_null, rows, distinct)
