"""Self-check of a prediction.csv: shape, non-null counts, first rows, and suspicious patterns.

Read the way the official scorer reads (strict CSV, UTF-8, header required), so what is
reported here is what will be scored.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from datasolver.eval.normalize import NULL_LIKE  # the cells the official scorer reads as empty
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.arrow_csv import DISTINCT_MAX_CELLS, read_clean_table

_INDEX_NAMES = frozenset({"", "index", "unnamed: 0", "level_0"})


# The largest prediction.csv the parent reads (self-check, publish); answers are small tables.
PREDICTION_MAX_BYTES = 256 << 20
HEAD_ROWS = 50  # rows kept for display; the rest are counted, not stored
SAMPLE_ROWS = 20_000  # rows kept for the answer checks (a larger answer is checked on a sample)
SAMPLE_CELLS = 200_000  # cells kept in all: a wide answer keeps fewer rows (4,000 columns: 50)
MAX_COLUMNS = 10_000  # an answer wider than this is not checked (it is never what a question asks)
BULK_BYTES = 1 << 20  # from this size a clean file is read by Arrow (arrow_csv), not row by row
_DUPLICATE_TRACK_ROWS = 1_000_000  # distinct rows remembered for the duplicate count


@dataclass
class PredictionCheck:
    """What a prediction.csv holds, and warnings worth acting on before answering."""

    columns: list[str]
    head: list[list[str]]  # the first HEAD_ROWS rows
    n_rows: int = 0
    non_null: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    sample: list[list[str]] = field(default_factory=list)  # the first SAMPLE_ROWS rows

    @property
    def sampled(self) -> bool:
        """The answer has more rows than `sample` keeps."""
        return self.n_rows > len(self.sample)

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_rows, len(self.columns)


def is_null(cell: str) -> bool:
    return cell.strip().lower() in NULL_LIKE


def check_prediction(path: Path, *, max_bytes: int = PREDICTION_MAX_BYTES, answer_checked: bool = False) -> PredictionCheck:
    """Stream `path` strictly and collect warnings; unreadable files become warnings too.

    The file is opened without following a symlink and must be a regular file of at most
    `max_bytes`; memory stays bounded whatever it holds: rows are kept up to `SAMPLE_CELLS` cells
    (`kept_rows`), and a header of more than `MAX_COLUMNS` names is a warning, not read further. With `answer_checked`, the facts the
    answer checks state in their CHECK lines (no rows, duplicate rows, an all-null column, a
    leaked index column) are left to them: neither counted here nor warned about twice.
    """
    try:
        with safe_files.open_regular(path, max_bytes=max_bytes) as raw:
            if os.fstat(raw.fileno()).st_size >= BULK_BYTES:
                data = raw.read()
                bulk = _check_bulk(data, answer_checked)
                if bulk is not None:
                    return bulk
                raw = io.BytesIO(data)
            return _check_stream(io.TextIOWrapper(raw, encoding="utf-8-sig", newline=""), answer_checked)
    except UnicodeDecodeError as exc:
        return PredictionCheck([], [], warnings=[f"not UTF-8 ({exc}): the scorer gives 0"])
    except UnsafeFile as exc:
        return PredictionCheck([], [], warnings=[f"not checked: {exc}"])
    except csv.Error as exc:
        return PredictionCheck([], [], warnings=[f"not readable as CSV ({exc})"])


def kept_rows(n_columns: int) -> tuple[int, int]:
    """(rows shown, rows sampled) for an answer of `n_columns`: at most SAMPLE_CELLS cells in all."""
    sample = max(1, min(SAMPLE_ROWS, SAMPLE_CELLS // max(n_columns, 1)))
    return min(HEAD_ROWS, sample), sample


def _too_wide(columns: list[str]) -> PredictionCheck:
    return PredictionCheck([], [], warnings=[
        f"{len(columns):,} columns, over the {MAX_COLUMNS:,} a self-check reads: not checked. An answer holds "
        "only the columns the question asks for."])


def _check_bulk(data: bytes, answer_checked: bool) -> PredictionCheck | None:
    read = read_clean_table(data, first_cells=SAMPLE_CELLS, first_rows=SAMPLE_ROWS, null_like=NULL_LIKE,
                            count_distinct=not answer_checked)
    if read is None:
        return None
    head, _ = kept_rows(len(read.columns))
    check = PredictionCheck(read.columns, read.first_rows[:head], read.n_rows, read.non_null,
                            sample=read.first_rows)
    dupes = read.n_rows - read.distinct_rows if read.distinct_rows is not None else 0
    check.warnings = _warnings(read.columns, read.n_rows, dupes, read.non_null, answer_checked)
    if read.distinct_skipped:
        check.warnings.append(f"duplicate rows not counted: the answer has over {DISTINCT_MAX_CELLS:,} cells")
    return check


def _check_stream(text: io.TextIOBase, answer_checked: bool = False) -> PredictionCheck:
    reader = csv.reader(text)
    columns = next(reader, None)
    if columns is None:
        return PredictionCheck([], [], warnings=["the file is empty (no header): the scorer gives 0"])
    if len(columns) > MAX_COLUMNS:
        return _too_wide(columns)
    head_rows, sample_rows = kept_rows(len(columns))
    check = PredictionCheck(columns, [])
    check.non_null = [0] * len(columns)
    ragged_first, ragged = 0, 0
    seen: set[int] = set()  # 8-byte row digests: ~60 bytes a row, capped
    dupes, tracked_all = 0, True
    for row in reader:
        check.n_rows += 1
        if len(check.sample) < sample_rows:
            check.sample.append(row)
            if len(check.head) < head_rows:
                check.head.append(row)
        if len(row) != len(columns):
            ragged += 1
            ragged_first = ragged_first or check.n_rows + 1
        for i, cell in enumerate(row[: len(columns)]):
            if not is_null(cell):
                check.non_null[i] += 1
        if answer_checked:
            continue
        key = int.from_bytes(hashlib.blake2b(repr(row).encode("utf-8", "backslashreplace"), digest_size=8).digest(), "big")
        if key in seen:
            dupes += 1
        elif len(seen) < _DUPLICATE_TRACK_ROWS:
            seen.add(key)
        else:
            tracked_all = False
    if ragged:
        check.warnings.append(
            f"{ragged} row(s) have a field count different from the header (file line {ragged_first}…): "
            "the scorer gives 0"
        )
    check.warnings += _warnings(columns, check.n_rows, dupes, check.non_null, answer_checked)
    if not tracked_all:
        check.warnings.append(f"duplicate rows counted against the first {_DUPLICATE_TRACK_ROWS} distinct rows only")
    return check


def _warnings(columns: list[str], n_rows: int, dupes: int, non_null: list[int], answer_checked: bool) -> list[str]:
    out = []
    repeated = [name for name, n in Counter(columns).items() if n > 1]
    if repeated:
        out.append(f"repeated column name(s): {', '.join(map(repr, repeated))}")
    if answer_checked:
        return out  # empty_result, duplicate_rows, all_null_column and helper_column say the rest
    if not n_rows:
        out.append("no rows: re-check filters and join keys before answering with an empty result")
        return out
    if dupes:
        out.append(f"{dupes} duplicate row(s): check joins, or use DISTINCT if the question wants unique rows")
    for name, count in zip(columns, non_null):
        if count == 0:
            out.append(f"column {name!r} is entirely null")
    if columns and _index_like(columns[0]):
        out.append(
            f"first column {columns[0]!r} looks like a leaked row index: drop it unless the question asks for it"
        )
    return out


def _index_like(name: str) -> bool:
    # The names pandas gives a leaked index: reset_index() → index/level_0, to_csv(index=True) → "".
    # Judged by name only: a 0..n-1 key column (a group id, a rank) is often a real answer column.
    return name.strip().lower() in _INDEX_NAMES or name.strip().lower().startswith("unnamed: ")
