"""Self-check of a prediction.csv: shape, non-null counts, first rows, and suspicious patterns.

Read the way the official scorer reads (strict CSV, UTF-8, header required), so what is
reported here is what will be scored.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# Cells the scorer normalizes to empty (case-insensitive, trimmed).
NULL_LIKE = frozenset({"", "null", "none", "nan", "nat", "<na>"})
_INDEX_NAMES = frozenset({"", "index", "unnamed: 0", "level_0"})


@dataclass
class PredictionCheck:
    """What a prediction.csv holds, and warnings worth acting on before answering."""

    columns: list[str]
    rows: list[list[str]]
    non_null: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.columns)


def is_null(cell: str) -> bool:
    return cell.strip().lower() in NULL_LIKE


def check_prediction(path: Path) -> PredictionCheck:
    """Read `path` strictly and collect warnings; unreadable files become warnings too."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        return PredictionCheck([], [], warnings=[f"not UTF-8 ({exc}): the scorer gives 0"])
    records = list(csv.reader(io.StringIO(text, newline="")))
    if not records:
        return PredictionCheck([], [], warnings=["the file is empty (no header): the scorer gives 0"])
    columns, rows = records[0], records[1:]
    check = PredictionCheck(columns, rows)
    ragged = [i + 2 for i, row in enumerate(rows) if len(row) != len(columns)]
    if ragged:
        check.warnings.append(
            f"{len(ragged)} row(s) have a field count different from the header (file line {ragged[0]}…): "
            "the scorer gives 0"
        )
    check.non_null = [sum(1 for row in rows if i < len(row) and not is_null(row[i])) for i in range(len(columns))]
    check.warnings += _warnings(columns, rows, check.non_null)
    return check


def _warnings(columns: list[str], rows: list[list[str]], non_null: list[int]) -> list[str]:
    out = []
    if not rows:
        out.append("no rows: re-check filters and join keys before answering with an empty result")
        return out
    dupes = sum(n - 1 for n in Counter(tuple(r) for r in rows).values() if n > 1)
    if dupes:
        out.append(f"{dupes} duplicate row(s): check joins, or use DISTINCT if the question wants unique rows")
    for name, count in zip(columns, non_null):
        if count == 0:
            out.append(f"column {name!r} is entirely null")
    repeated = [name for name, n in Counter(columns).items() if n > 1]
    if repeated:
        out.append(f"repeated column name(s): {', '.join(map(repr, repeated))}")
    if columns and _index_like(columns[0]):
        out.append(
            f"first column {columns[0]!r} looks like a leaked row index: drop it unless the question asks for it"
        )
    return out


def _index_like(name: str) -> bool:
    # The names pandas gives a leaked index: reset_index() → index/level_0, to_csv(index=True) → "".
    # Judged by name only: a 0..n-1 key column (a group id, a rank) is often a real answer column.
    return name.strip().lower() in _INDEX_NAMES or name.strip().lower().startswith("unnamed: ")
