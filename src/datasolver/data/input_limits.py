"""How much input one task may bring: a cap per file and one across all of a task's table files,
and how large a table a reader may make of what a file writes.

The file caps are decided at registration from file sizes alone, before any row is read, so that
the parent and the sandboxed solver.py (which opens the same catalog) skip the same files. A file
over a cap is a per-file note like any unreadable file; the other tables still load.

The shape cap (`shape_refusal`) is for readers that pad: JSON records with different keys and
Markdown pipe rows shorter than their header become rows of the full width, so 12,000 objects with
a key each (169 KB) asked for a 12,000 x 12,000 table (2.5 GB). A table may have at most
MAX_TABLE_COLUMNS columns, and its empty padding may outnumber the cells the file writes only up to
PADDING_PER_VALUE each (or PADDING_FLOOR_CELLS in all): the memory a table costs stays in
proportion to the file.

The expansion cap (`expansion_refusal`) is for files that compress: a Parquet file stores a long
value once in its dictionary and each row as an index into it, so 6 KB held 40,000 rows of 10 KB
text (a 629 MB table, 1.8 GB to load). A table may take at most MAX_EXPANSION bytes per byte of
its file (or EXPANSION_FLOOR_BYTES in all), its values counted as they are once decoded, decided
before the table is built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from datasolver.data.errors import DataError
from datasolver.settings import check_settings, count
from datasolver.sizes import human_size

FILE_ENV = "DATASOLVER_MAX_FILE_BYTES"
TOTAL_ENV = "DATASOLVER_MAX_INPUT_BYTES"
GiB = 1 << 30
# A table file is read into memory as text first (about 2-3x its size), so 2 GiB per file and
# 4 GiB per task keep one task well inside a 16-24 GB machine running several tasks at once.
DEFAULT_MAX_FILE_BYTES = 2 * GiB
DEFAULT_MAX_TOTAL_BYTES = 4 * GiB
MAX_TABLE_COLUMNS = 4_096
PADDING_PER_VALUE = 16
PADDING_FLOOR_CELLS = 1_000_000
MAX_EXPANSION = 64
"""Bytes a table may take per byte of its file: text runs 2-10x smaller in Parquet, very repetitive
columns more, so real files stay well inside it."""
EXPANSION_FLOOR_BYTES = 64 << 20
"""What any file may expand to, however small (1 million rows of 64 bytes)."""
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "mib": 1 << 20, "g": GiB, "gb": GiB, "gib": GiB, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """`4294967296`, `4G`, `512MiB`, `1.5 GB` → bytes (powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise DataError(f"{text!r} is not a size: use bytes (1048576) or a unit (512M, 4G)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class InputLimits:
    """The caps; `from_env` reads DATASOLVER_MAX_FILE_BYTES / DATASOLVER_MAX_INPUT_BYTES."""

    max_file_bytes: int = count(DEFAULT_MAX_FILE_BYTES, f"a larger table file is not loaded (a note says so; "
                                f"`{FILE_ENV}`)", least=0)
    max_total_bytes: int = count(DEFAULT_MAX_TOTAL_BYTES, f"a task's table files together; a file that would pass "
                                 f"it is not loaded (`{TOTAL_ENV}`)", least=0)

    def __post_init__(self) -> None:
        check_settings(self)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> InputLimits:
        env = os.environ if environ is None else environ
        values = {}
        for field_name, name in (("max_file_bytes", FILE_ENV), ("max_total_bytes", TOTAL_ENV)):
            if env.get(name, "").strip():
                try:
                    values[field_name] = parse_size(env[name])
                except DataError as exc:
                    raise DataError(f"{name}: {exc}") from exc
        return cls(**values)


class InputBudget:
    """The bytes of a task's table files accepted so far, against its `InputLimits`."""

    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.used = 0

    def refusal(self, size: int) -> str | None:
        """Why a file of `size` bytes may not be registered, or None when it fits."""
        limits = self.limits
        if size > limits.max_file_bytes:
            return (f"not loaded: the file is {human_size(size)}, over the {human_size(limits.max_file_bytes)} "
                    f"limit per file (raise it with {FILE_ENV})")
        if self.used + size > limits.max_total_bytes:
            return (f"not loaded: with this file the task's table files would reach {human_size(self.used + size)}, "
                    f"over the {human_size(limits.max_total_bytes)} limit across files (raise it with {TOTAL_ENV})")
        return None

    def spend(self, size: int) -> None:
        self.used += size


def shape_refusal(rows: int, columns: int, values: int) -> str | None:
    """Why a table of `rows` x `columns` may not be built from the `values` cells a file writes
    (the rest is padding), or None when it may. Decided before any row is padded."""
    if columns > MAX_TABLE_COLUMNS:
        return f"its rows would need {columns:,} columns, over the {MAX_TABLE_COLUMNS:,}-column limit for a table"
    padding = rows * columns - values
    if padding > max(PADDING_FLOOR_CELLS, PADDING_PER_VALUE * values):
        return (f"its {values:,} values would be padded to {rows * columns:,} cells ({rows:,} rows x {columns:,} "
                f"columns), over {PADDING_PER_VALUE} empty cells per value")
    return None


def expansion_refusal(table_bytes: int, file_bytes: int) -> str | None:
    """Why a table whose values take `table_bytes` once decoded may not be built from a file of
    `file_bytes`, or None when it may (at most MAX_EXPANSION times the file, or EXPANSION_FLOOR_BYTES)."""
    if table_bytes <= max(EXPANSION_FLOOR_BYTES, MAX_EXPANSION * file_bytes):
        return None
    return (f"its values would take {human_size(table_bytes)} as a table, {table_bytes / max(file_bytes, 1):,.0f} "
            f"times the file's {human_size(file_bytes)}: over the {MAX_EXPANSION} times (or "
            f"{human_size(EXPANSION_FLOOR_BYTES)} in all) a table may take of what its file holds")
