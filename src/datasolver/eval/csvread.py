"""Strict CSV reading as the official scorer does it: UTF-8 (BOM allowed), header required,
every row exactly as wide as the header."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from datasolver.eval.errors import CsvFormatError, RaggedRow


@dataclass(frozen=True)
class Table:
    """A CSV read as text: the header and the data rows, cells exactly as written."""

    header: list[str]
    rows: list[list[str]]

    def columns(self) -> list[list[str]]:
        """The cells column by column (row order kept)."""
        return [[row[i] for row in self.rows] for i in range(len(self.header))]


def read_strict_csv(path: Path) -> Table:
    """Read `path` under the official rules, or raise CsvFormatError / RaggedRow saying why."""
    try:
        # newline="" lets the csv module see quoted CR/LF inside cells as data.
        with open(path, encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, strict=True)
            header = next(reader, None)
            if not header:
                # An empty file, or a blank first line (a row with zero fields).
                raise CsvFormatError(f"{path.name}: no header row (the first line must name the columns)")
            rows: list[list[str]] = []
            for row in reader:
                if len(row) != len(header):
                    raise RaggedRow(
                        f"{path.name} line {reader.line_num}: {len(row)} fields, header has {len(header)}",
                        line=reader.line_num,
                        fields=len(row),
                        expected=len(header),
                    )
                rows.append(row)
    except UnicodeDecodeError as exc:
        raise CsvFormatError(f"{path.name}: not UTF-8 (byte {exc.start}); write the file as UTF-8") from exc
    except csv.Error as exc:
        raise CsvFormatError(f"{path.name}: malformed CSV: {exc}") from exc
    except OSError as exc:
        raise CsvFormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return Table(header=header, rows=rows)
