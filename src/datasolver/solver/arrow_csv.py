"""A large prediction.csv read by Arrow's CSV reader (threaded, in C++) instead of row by row in
Python: its shape, non-null counts, first rows and, when asked, its distinct rows.

Only for files that read as one clean table. A row whose field count differs from the header,
bytes that are not UTF-8, a blank line, a header with a line break in it or a repeated name, and a
one-column file give None, and the caller reads the file the strict Python way, which says exactly
what is wrong; so does a file of more than WIDE_COLUMNS columns, whose Arrow buffers would cost
many times its size (a 32 MB file of 4,000 columns: 1.5 GB). The file is read block by block, so
memory stays a few blocks; only the distinct count holds the table, up to DISTINCT_MAX_CELLS cells.
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


BLOCK_BYTES = 4 << 20  # read in blocks of this size: memory stays a few blocks whatever the file holds
WIDE_COLUMNS = 64  # wider files are read row by row: Arrow's per-column buffers cost ×10 a wide file's size
DISTINCT_MAX_CELLS = 20_000_000  # counting distinct rows holds the table: only up to this many cells


@dataclass
class ArrowRead:
    columns: list[str]
    n_rows: int
    non_null: list[int]
    first_rows: list[list[str]]
    distinct_rows: int | None
    distinct_skipped: bool = False  # asked for, but the table has more than DISTINCT_MAX_CELLS cells


def read_clean_table(data: bytes, *, first_rows: int, first_cells: int, null_like: frozenset[str],
                     count_distinct: bool) -> ArrowRead | None:
    """`data` (a whole CSV file) as counts and its first rows (at most `first_rows`, and at most
    `first_cells` cells in all), read block by block; None when it is not one clean table (see
    above) or has more than WIDE_COLUMNS columns."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if any(blank in data for blank in _BLANK_LINES):
        return None
    try:
        header = next(csv.reader(io.StringIO(data[:1 << 16].decode("utf-8", errors="replace"))), None)
    except csv.Error:
        return None
    if (not header or len(header) < 2 or len(header) > WIDE_COLUMNS or len(set(header)) != len(header)
            or any("\n" in name or "\r" in name for name in header)):
        return None
    names = [f"c{i}" for i in range(len(header))]
    nulls = pa.array(sorted(null_like), pa.string())
    keep = max(1, min(first_rows, first_cells // len(names)))
    n_rows, non_null, rows = 0, [0] * len(names), []
    batches: list[pa.RecordBatch] | None = [] if count_distinct else None
    try:
        reader = pa_csv.open_csv(
            pa.BufferReader(data),
            read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1, use_threads=True, block_size=BLOCK_BYTES),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                  strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
        for batch in reader:
            n_rows += batch.num_rows
            for i, column in enumerate(batch.columns):
                normalized = pc.utf8_lower(pc.utf8_trim_whitespace(column))
                non_null[i] += batch.num_rows - (pc.sum(pc.is_in(normalized, value_set=nulls)).as_py() or 0)
            if len(rows) < keep:
                rows += [list(r.values()) for r in batch.slice(0, keep - len(rows)).to_pylist()]
            if batches is not None and n_rows * len(names) <= DISTINCT_MAX_CELLS:
                batches.append(batch)
            elif batches is not None:
                batches = None  # too many cells to hold for the distinct count
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    distinct = None
    if batches and n_rows:
        distinct = pa.Table.from_batches(batches).group_by(names).aggregate([]).num_rows
    return ArrowRead(header, n_rows, non_null, rows, distinct, distinct_skipped=count_distinct and batches is None)
