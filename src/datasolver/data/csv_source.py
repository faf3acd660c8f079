"""Read a CSV file into an all-text Arrow table: encoding, delimiter and header handled here.

Types are inferred afterwards over the whole column (see infer_types), so a late bad value can
never fail the read, and codes with leading zeros stay text.
"""

from __future__ import annotations

import codecs
import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from datasolver.data.errors import SourceSkipped
from datasolver.data.names import unique_names

DELIMITERS = (",", "\t", ";", "|")
SNIFF_BYTES = 256 * 1024
CHUNK = 1 << 20
MAX_REPORTED_BAD_ROWS = 5


@dataclass
class CsvRead:
    """An all-text table read from one CSV file, with what had to be left out or repaired."""

    table: pa.Table
    encoding: str
    delimiter: str
    bad_rows: int = 0
    bad_row_examples: list[str] = field(default_factory=list)
    replaced_bytes: bool = False

    def problems(self) -> list[str]:
        notes = []
        if self.bad_rows:
            shown = "; ".join(self.bad_row_examples)
            notes.append(f"{self.bad_rows} row(s) with the wrong number of fields not loaded ({shown})")
        if self.replaced_bytes:
            notes.append("undecodable bytes replaced by U+FFFD (neither UTF-8 nor GB18030)")
        return notes


def detect_encoding(path: Path) -> str:
    """utf-16 by BOM, else utf-8-sig / utf-8 if the whole file decodes, else gb18030, else ''.

    The whole file is checked because a GBK file can start with a long ASCII stretch.
    '' means nothing decodes strictly; the caller decodes with replacement and reports it.
    """
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    first = "utf-8-sig" if head.startswith(codecs.BOM_UTF8) else "utf-8"
    for encoding in (first, "gb18030"):
        if _decodes(path, encoding):
            return encoding
    return ""


def _decodes(path: Path, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def read_head_text(path: Path, encoding: str, size: int = SNIFF_BYTES) -> str:
    """The first `size` bytes decoded (a partial trailing character is dropped)."""
    with open(path, "rb") as fh:
        raw = fh.read(size)
    decoder = codecs.getincrementaldecoder(encoding or "utf-8")(errors="replace")
    return decoder.decode(raw, final=False)


def sniff_delimiter(sample: str) -> str:
    """Pick the candidate whose field count is most consistent (and > 1) over the first lines."""
    lines = sample.splitlines()[:60]
    if len(sample) >= SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut mid-record
    best, best_score = ",", (-1, 0)
    for delim in DELIMITERS:
        try:
            counts = [len(row) for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=delim)]
        except csv.Error:
            continue
        if not counts or counts[0] < 2:
            continue
        agreeing = sum(1 for n in counts if n == counts[0])
        score = (agreeing, counts[0])
        if score > best_score:
            best, best_score = delim, score
    return best


def header_names(sample: str, delimiter: str) -> list[str]:
    """Header fields exactly as written; blanks become column<N>, repeats get _1, _2 suffixes."""
    reader = csv.reader(io.StringIO(sample), delimiter=delimiter)
    try:
        return unique_names(next(reader, []))
    except csv.Error as exc:
        raise SourceSkipped(f"no readable CSV header ({exc})") from exc


def looks_binary(path: Path, size: int = SNIFF_BYTES) -> bool:
    """True when the head holds NUL bytes outside a UTF-16 file: binary data, not text."""
    with open(path, "rb") as fh:
        head = fh.read(size)
    return b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def read_csv_header(path: Path) -> tuple[str, str, list[str]]:
    """(encoding, delimiter, column names) from the file's head only: cheap, for registration."""
    if looks_binary(path):
        raise SourceSkipped("binary data (NUL bytes), not a text CSV")
    encoding = detect_encoding(path)
    sample = read_head_text(path, encoding)
    if not sample.strip():
        raise SourceSkipped("empty file")
    delimiter = sniff_delimiter(sample)
    names = header_names(sample, delimiter)
    if not names:
        raise SourceSkipped("no header row")
    return encoding, delimiter, names


def read_csv_text(path: Path, scratch: Path) -> CsvRead:
    """Read the whole file as text columns; rows with the wrong field count are counted, not loaded."""
    encoding, delimiter, names = read_csv_header(path)
    source = path
    replaced = False
    if encoding == "":
        # Nothing decodes strictly: transcode with replacement so the rest of the file still loads.
        source = scratch / (path.name + ".utf8.csv")
        _transcode(path, source)
        encoding, replaced = "utf-8", True
    bad: list[str] = []
    bad_count = 0

    def on_invalid(row: pacsv.InvalidRow) -> str:
        nonlocal bad_count
        bad_count += 1
        if len(bad) < MAX_REPORTED_BAD_ROWS:
            line = f"line {row.number}" if row.number is not None else "a row"
            bad.append(f"{line}: {row.actual_columns} fields, expected {row.expected_columns}")
        return "skip"

    read_options = pacsv.ReadOptions(
        column_names=names,
        skip_rows=1,
        encoding="utf8" if encoding in ("utf-8", "utf-8-sig") else encoding,
        block_size=8 << 20,
    )
    parse_options = pacsv.ParseOptions(
        delimiter=delimiter, newlines_in_values=True, invalid_row_handler=on_invalid
    )
    convert_options = pacsv.ConvertOptions(
        column_types={name: pa.string() for name in names},
        strings_can_be_null=True,
        null_values=[""],
        quoted_strings_can_be_null=False,
    )
    try:
        table = pacsv.read_csv(
            source, read_options=read_options, parse_options=parse_options, convert_options=convert_options
        )
    except (pa.ArrowInvalid, UnicodeDecodeError, csv.Error) as exc:
        raise SourceSkipped(f"could not parse as CSV ({encoding}, delimiter {delimiter!r}): {exc}") from exc
    return CsvRead(table, encoding, delimiter, bad_count, bad, replaced)


def _transcode(src: Path, dst: Path) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    with open(src, "rb") as fin, open(dst, "w", encoding="utf-8", newline="") as fout:
        while chunk := fin.read(CHUNK):
            fout.write(decoder.decode(chunk))
        fout.write(decoder.decode(b"", final=True))
