"""The official task score: column multiset signatures matched one-to-one, extra columns cost.

score = max(0, matched/gold_cols − λ·(pred_cols − matched)/pred_cols), λ = 0.1 by default.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.eval.csvread import Table, read_strict_csv
from datasolver.eval.errors import CsvFormatError, InvalidGold
from datasolver.eval.explain import ColumnReport, explain_columns
from datasolver.eval.normalize import normalize_cell

DEFAULT_PENALTY = 0.1

# TaskScore.status values.
SCORED = "scored"  # both files read; the score is the metric's value
MISSING = "missing"  # no prediction file: 0
INVALID = "invalid"  # prediction unreadable under the strict rules (ragged row, not UTF-8…): 0


@dataclass
class TaskScore:
    """One task's score and enough detail to see why it is not 1."""

    score: float
    matched: int
    gold_cols: int
    pred_cols: int
    reason: str
    status: str = SCORED
    gold_rows: int = 0
    pred_rows: int = 0
    columns: list[ColumnReport] = field(default_factory=list)

    @property
    def extra(self) -> int:
        """Predicted columns that matched no gold column (each costs λ/pred_cols)."""
        return self.pred_cols - self.matched

    @property
    def recall(self) -> float:
        """Fraction of gold columns matched exactly."""
        return self.matched / self.gold_cols if self.gold_cols else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results JSON."""
        return {
            "score": self.score,
            "matched": self.matched,
            "gold_cols": self.gold_cols,
            "pred_cols": self.pred_cols,
            "extra": self.extra,
            "reason": self.reason,
            "status": self.status,
            "gold_rows": self.gold_rows,
            "pred_rows": self.pred_rows,
            "columns": [column.to_dict() for column in self.columns],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskScore:
        """Inverse of to_dict."""
        fields = {k: data[k] for k in ("score", "matched", "gold_cols", "pred_cols", "reason")}
        return cls(
            **fields,
            status=data.get("status", SCORED),
            gold_rows=data.get("gold_rows", 0),
            pred_rows=data.get("pred_rows", 0),
            columns=[ColumnReport.from_dict(c) for c in data.get("columns", [])],
        )


def check_penalty(penalty: float) -> None:
    """Reject a λ the formula cannot use (negative, NaN, infinite) before any file is read."""
    if not (isinstance(penalty, (int, float)) and math.isfinite(penalty) and penalty >= 0):
        raise ValueError(f"penalty must be a finite number >= 0, got {penalty!r}")


def score_tables(pred: Table, gold: Table, penalty: float = DEFAULT_PENALTY, *, explain: bool = True) -> TaskScore:
    """Score a prediction table against a gold table (both already read strictly)."""
    check_penalty(penalty)
    seen: dict[str, str] = {}  # raw cell → normalized; values repeat a lot across columns and files
    gold_columns = [_normalize_column(column, seen) for column in gold.columns()]
    pred_columns = [_normalize_column(column, seen) for column in pred.columns()]
    pairs = match_columns(pred_columns, gold_columns)
    matched = len(pairs)
    gold_cols, pred_cols = len(gold_columns), len(pred_columns)
    value = max(0.0, matched / gold_cols - penalty * (pred_cols - matched) / pred_cols)
    reports = explain_columns(gold.header, gold_columns, pred.header, pred_columns, pairs) if explain else []
    return TaskScore(
        score=value,
        matched=matched,
        gold_cols=gold_cols,
        pred_cols=pred_cols,
        reason=_reason(matched, gold_cols, pred_cols, len(gold.rows), len(pred.rows)),
        gold_rows=len(gold.rows),
        pred_rows=len(pred.rows),
        columns=reports,
    )


def _normalize_column(column: list[str], seen: dict[str, str]) -> list[str]:
    out = []
    for cell in column:
        value = seen.get(cell)
        if value is None:
            value = seen[cell] = normalize_cell(cell)
        out.append(value)
    return out


def match_columns(pred_columns: list[list[str]], gold_columns: list[list[str]]) -> dict[int, int]:
    """Pair gold columns with predicted columns of identical value multisets, one-to-one.

    Returns gold index → predicted index. Its length is Σ min(gold count, pred count) over
    signatures. Among interchangeable columns, pairs are made left to right.
    """
    free_preds: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for pi, column in enumerate(pred_columns):
        free_preds[signature(column)].append(pi)
    pairs: dict[int, int] = {}
    for gi, column in enumerate(gold_columns):
        candidates = free_preds.get(signature(column))
        if candidates:
            pairs[gi] = candidates.pop(0)
    return pairs


def signature(column: list[str]) -> tuple[str, ...]:
    """A column's identity for matching: its normalized values as a sorted multiset."""
    return tuple(sorted(column))


def prediction_signature(pred_csv: Path) -> str:
    """What the scorer sees of a prediction, as a short hash: its columns' normalized value
    multisets in any order (names and row order ignored). Two predictions with the same signature
    score the same against any gold. "missing" or "invalid" when the file cannot be scored."""
    pred_csv = Path(pred_csv)
    if not pred_csv.is_file():
        return MISSING
    try:
        table = read_strict_csv(pred_csv)
    except CsvFormatError:
        return INVALID
    seen: dict[str, str] = {}
    columns = sorted(signature(_normalize_column(c, seen)) for c in table.columns())
    digest = hashlib.sha256(json.dumps(columns, ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"{len(columns)}c{len(table.rows)}r:{digest[:12]}"


def score_files(pred_csv: Path | None, gold_csv: Path, penalty: float = DEFAULT_PENALTY, *,
                explain: bool = True) -> TaskScore:
    """Score one prediction file against its gold file.

    A missing (None) or unreadable prediction scores 0 with the reason; a missing or unreadable gold
    file raises InvalidGold, since no score against it would mean anything.
    """
    check_penalty(penalty)
    gold_csv = Path(gold_csv)
    if not gold_csv.is_file():
        raise InvalidGold(f"gold file not found: {gold_csv}")
    try:
        gold = read_strict_csv(gold_csv)
    except CsvFormatError as exc:
        raise InvalidGold(f"gold file unreadable: {exc}") from exc
    if pred_csv is None or not Path(pred_csv).is_file():
        return _zero(gold, "missing prediction", MISSING)
    pred_csv = Path(pred_csv)
    try:
        pred = read_strict_csv(pred_csv)
    except CsvFormatError as exc:
        return _zero(gold, str(exc), INVALID)
    return score_tables(pred, gold, penalty, explain=explain)


def _zero(gold: Table, reason: str, status: str) -> TaskScore:
    return TaskScore(score=0.0, matched=0, gold_cols=len(gold.header), pred_cols=0, reason=reason,
                     status=status, gold_rows=len(gold.rows))


def _reason(matched: int, gold_cols: int, pred_cols: int, gold_rows: int, pred_rows: int) -> str:
    parts: list[str] = []
    if matched < gold_cols:
        parts.append(f"{gold_cols - matched}/{gold_cols} gold columns unmatched")
    if pred_cols > matched:
        extra = pred_cols - matched
        parts.append(f"{extra} extra column{'s' if extra != 1 else ''}")
    if pred_rows != gold_rows:
        parts.append(f"{pred_rows} rows, gold has {gold_rows}")
    return "; ".join(parts) or "ok"

