"""CSV files: the header and dialect from the file's head, and the two ways rows are read.

- `scan_sql`: DuckDB's own `read_csv` over a UTF-8 file, every column as text, in strict mode: the
  fast way, parallel and never through Python. Any row it cannot read as the header says (a
  ragged row, a bad quote, bytes that are not UTF-8) fails the scan instead of being skipped.
- `read_csv_text`: the careful way the catalog falls back to: Arrow's reader, streamed block by
  block (so a stop request is seen between blocks), skipping rows with the wrong number of fields
  and counting them for a note.

Both give text columns; types are decided afterwards over the whole column (see infer_types), so a
late bad value can never fail the read, and codes with leading zeros stay text. Files in another
encoding are decoded into a UTF-8 copy first (see encoding.py).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from typing import TYPE_CHECKING

from datasolver.data.compressed import read_head
from datasolver.data.encoding import head_codec
from datasolver.data.errors import SourceSkipped, SourceStopped
from datasolver.data.names import unique_names, without_quote_pair
from datasolver.data.title_lines import header_index, is_number

if TYPE_CHECKING:  # pyarrow (~0.3 CPU-s to import) loads only where a file is read
    import pyarrow as pa
    import pyarrow.csv as pacsv

DELIMITERS = (",", "\t", ";", "|")
SNIFF_BYTES = 256 * 1024
MAX_REPORTED_BAD_ROWS = 5
BLOCK_BYTES = 8 << 20  # Arrow's block, and the longest line either reader accepts

Stop = Callable[[], bool]


@dataclass(frozen=True)
class CsvHead:
    """What a CSV file's head tells: the encoding it looks like, the delimiter and the column names."""

    codec: str
    delimiter: str
    names: list[str]
    skip: int = 0  # lines above the header (title lines), see title_lines
    above: str = ""  # the first of them, for the note
    quoted: tuple[str, ...] = ()  # names as written whose quote pair was removed (see header_names)

    @property
    def decimal_comma(self) -> bool:
        """A `;`-delimited file may write numbers with decimal commas (`5,1`)."""
        return self.delimiter == ";"


@dataclass
class CsvRead:
    """An all-text table read from one CSV file, with the rows that had to be left out."""

    table: pa.Table
    bad_rows: int = 0
    bad_row_examples: list[str] = field(default_factory=list)

    def skipped_note(self) -> str | None:
        if not self.bad_rows:
            return None
        shown = "; ".join(self.bad_row_examples)
        return f"{self.bad_rows} row(s) with the wrong number of fields not loaded ({shown})"


def read_head_text(path: Path, encoding: str, size: int = SNIFF_BYTES) -> str:
    """The first `size` bytes decoded (a partial trailing character is dropped)."""
    with open(path, "rb") as fh:
        raw = fh.read(size)
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")(errors="replace")
    return decoder.decode(raw, final=False)


def sniff_layout(sample: str, skip: int | None = None) -> tuple[str, int]:
    """The delimiter and the lines above the header (`skip`; found by `title_lines.header_index`
    when None): the candidate whose field count from the header on is most consistent (and > 1)
    over the first lines."""
    lines = sample.splitlines()[:60 + (skip or 0)]
    if len(sample) >= SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut mid-record
    best, best_score = (",", skip or 0), (-1, 0)
    for delim in DELIMITERS:
        try:
            rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delim))
        except csv.Error:
            continue
        counts = [len(row) for row in rows]
        first = skip if skip is not None else header_index(
            counts, [bool(row) and not any(is_number(cell) for cell in row) for row in rows])
        counts = counts[first:]
        if not counts or counts[0] < 2:
            continue
        agreeing = sum(1 for n in counts if n == counts[0])
        score = (agreeing, counts[0])
        if score > best_score:
            best, best_score = (delim, first), score
    return best


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a file whose first line is its header."""
    return sniff_layout(sample, 0)[0]


def header_names(sample: str, delimiter: str) -> tuple[list[str], list[str]]:
    """Header fields as written, less one pair of quote characters left around a name (`'popul'`
    → `popul`, `names.without_quote_pair`); blanks become column<N>, repeats get _1, _2 suffixes.
    Also the names as written that lost their quotes."""
    reader = csv.reader(io.StringIO(sample), delimiter=delimiter)
    try:
        written = next(reader, [])
    except csv.Error as exc:
        raise SourceSkipped(f"no readable CSV header ({exc})") from exc
    bare = [without_quote_pair(name) for name in written]
    return unique_names(bare), [name for name, plain in zip(written, bare) if name != plain]



def looks_binary(head: bytes) -> bool:
    """True when the head holds NUL bytes outside a UTF-16 file: binary data, not text."""
    return b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def read_csv_header(path: Path, codec: str | None = None, header_row: int | None = None) -> CsvHead:
    """The encoding guess, delimiter, title lines and column names from the file's head only:
    cheap, for registration (the load decides the encoding on the whole file). `codec` skips the
    guess; `header_row` (1-based line number) says where the header is instead of looking."""
    head, whole = read_head(path, SNIFF_BYTES)  # decompressed for `x.csv.gz`
    if looks_binary(head):
        raise SourceSkipped("binary data (NUL bytes), not a text CSV")
    codec = codec or head_codec(head, whole)
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    sample = decoder.decode(head, final=whole).lstrip("\ufeff")
    if not sample.strip():
        raise SourceSkipped("empty file")
    delimiter, skip = sniff_layout(sample, None if header_row is None else header_row - 1)
    below = "".join(sample.splitlines(keepends=True)[skip:])
    if not below.strip():
        raise SourceSkipped(f"no line {skip + 1} to read the header from" if skip else "empty file")
    names, quoted = header_names(below, delimiter)
    if not names:
        raise SourceSkipped("no header row")
    above = sample.splitlines()[0].strip()[:80] if skip else ""
    return CsvHead(codec, delimiter, names, skip, above, tuple(quoted))


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def scan_sql(path: Path, head: CsvHead) -> str:
    """DuckDB's `read_csv` of a UTF-8 file as text columns named as the header says, strict: a row
    with the wrong number of fields, an unterminated quote or bytes that are not UTF-8 fail it.
    Unquoted empty fields are NULL, quoted ones (`""`) the empty text, as `read_csv_text` reads them."""
    columns = "{" + ", ".join(f"{sql_literal(n)}: 'VARCHAR'" for n in head.names) + "}"
    skip = f"skip = {head.skip}, " if head.skip else ""
    return (f"read_csv({sql_literal(os.fspath(path))}, header = true, {skip}delim = {sql_literal(head.delimiter)}, "
            "quote = '\"', escape = '\"', auto_detect = false, strict_mode = true, null_padding = false, "
            "ignore_errors = false, allow_quoted_nulls = false, encoding = 'utf-8', "
            f"max_line_size = {BLOCK_BYTES}, columns = {columns})")


def directly_scannable(head: CsvHead) -> bool:
    """Whether DuckDB's scan reads the file as `read_csv_text` would. A one-column file is not: a
    blank line there is a row holding NULL for DuckDB, and no row at all for Arrow (and the scorer).
    Nor is a header with a quoted line break in a name: DuckDB's scan then finds no row at all."""
    return len(head.names) > 1 and not any("\n" in n or "\r" in n for n in head.names)


def read_csv_text(path: Path, head: CsvHead, stop: Stop = lambda: False) -> CsvRead:
    """Read a UTF-8 file's rows as text columns, block by block; rows with the wrong field count
    are counted (and the first few described), not loaded."""
    import pyarrow as pa  # ~0.3 CPU-s to import: only where a source is read, never for a query on cached tables
    import pyarrow.csv as pacsv

    bad: list[str] = []
    bad_count = 0

    def on_invalid(row: pacsv.InvalidRow) -> str:
        nonlocal bad_count
        bad_count += 1
        if len(bad) < MAX_REPORTED_BAD_ROWS:
            line = f"line {row.number}" if row.number is not None else "a row"
            bad.append(f"{line}: {row.actual_columns} fields, expected {row.expected_columns}")
        return "skip"

    names = head.names
    # The header is skipped as a parsed row (a quoted line break in a name is one row, not two lines).
    read_options = pacsv.ReadOptions(column_names=names, skip_rows=head.skip, skip_rows_after_names=1, encoding="utf8", block_size=BLOCK_BYTES,
                                     use_threads=False)
    parse_options = pacsv.ParseOptions(delimiter=head.delimiter, newlines_in_values=True, invalid_row_handler=on_invalid)
    convert_options = pacsv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=True,
        null_values=[""],
        quoted_strings_can_be_null=False,
    )
    schema = pa.schema([(name, pa.string()) for name in names])
    try:
        reader = pacsv.open_csv(path, read_options=read_options, parse_options=parse_options,
                                convert_options=convert_options)
        batches = []
        for batch in reader:
            if stop():
                raise SourceStopped("stopped while reading the file")
            batches.append(batch)
    except (pa.ArrowInvalid, UnicodeDecodeError, csv.Error) as exc:
        raise SourceSkipped(f"could not parse as CSV (delimiter {head.delimiter!r}): {exc}") from exc
    return CsvRead(pa.Table.from_batches(batches, schema=schema), bad_count, bad)
