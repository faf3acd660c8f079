"""Why a task lost points: for each gold column, its match or the closest predicted column."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from datasolver.clip import clip

# Enough to recognise a wrong value without flooding a terminal or a results file.
SAMPLE_VALUES = 3
MAX_VALUE_CHARS = 80


@dataclass(frozen=True)
class ClosestColumn:
    """The predicted column that shares the most values with an unmatched gold column."""

    pred_name: str
    pred_index: int
    gold_rows: int
    pred_rows: int
    common: int  # values shared, counted with multiplicity
    already_matched: bool  # it is the exact match of another gold column
    first_difference: tuple[int, str | None, str | None] | None  # (sorted position, gold, pred)
    missing: list[str] = field(default_factory=list)  # gold values the prediction lacks
    unexpected: list[str] = field(default_factory=list)  # predicted values gold lacks


@dataclass(frozen=True)
class ColumnReport:
    """One gold column: which predicted column matched it exactly, or which came closest."""

    gold_name: str
    gold_index: int
    matched_name: str | None = None
    matched_index: int | None = None
    closest: ClosestColumn | None = None

    @property
    def matched(self) -> bool:
        """True when some predicted column has exactly this column's value multiset."""
        return self.matched_index is not None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ColumnReport:
        """Inverse of to_dict."""
        closest = data.get("closest")
        if closest is not None:
            diff = closest.get("first_difference")
            closest = ClosestColumn(**{**closest, "first_difference": tuple(diff) if diff else None})
        return cls(**{**data, "closest": closest})


def explain_columns(
    gold_header: list[str],
    gold_columns: list[list[str]],
    pred_header: list[str],
    pred_columns: list[list[str]],
    pairs: dict[int, int],
) -> list[ColumnReport]:
    """Report every gold column; `pairs` maps matched gold index → predicted index.

    Columns hold normalized values. The closest column is the one sharing the largest
    fraction of values; ties prefer a predicted column not matched elsewhere, then the same
    name, then the leftmost.
    """
    pred_counts = [Counter(column) for column in pred_columns]
    paired_preds = set(pairs.values())
    reports: list[ColumnReport] = []
    for gi, (name, column) in enumerate(zip(gold_header, gold_columns)):
        if gi in pairs:
            pi = pairs[gi]
            reports.append(ColumnReport(name, gi, matched_name=pred_header[pi], matched_index=pi))
            continue
        gold_counts = Counter(column)

        def rank(pi: int) -> tuple[float, bool, bool, int]:
            common = sum((gold_counts & pred_counts[pi]).values())
            size = max(len(column), len(pred_columns[pi]), 1)
            return (-common / size, pi in paired_preds, pred_header[pi] != name, pi)

        best = min(range(len(pred_columns)), key=rank, default=None)
        closest = None
        if best is not None:
            closest = _closest(column, gold_counts, pred_columns[best], pred_counts[best],
                               pred_header[best], best, best in paired_preds)
        reports.append(ColumnReport(name, gi, closest=closest))
    return reports


def _closest(
    gold: list[str],
    gold_counts: Counter[str],
    pred: list[str],
    pred_counts: Counter[str],
    pred_name: str,
    pred_index: int,
    already_matched: bool,
) -> ClosestColumn:
    return ClosestColumn(
        pred_name=pred_name,
        pred_index=pred_index,
        gold_rows=len(gold),
        pred_rows=len(pred),
        common=sum((gold_counts & pred_counts).values()),
        already_matched=already_matched,
        first_difference=_first_difference(sorted(gold), sorted(pred)),
        missing=_sample(gold_counts - pred_counts),
        unexpected=_sample(pred_counts - gold_counts),
    )


def _first_difference(gold: list[str], pred: list[str]) -> tuple[int, str | None, str | None] | None:
    # Signatures are sorted value lists, so the first sorted position that differs is
    # exactly where the two signatures part.
    for position in range(max(len(gold), len(pred))):
        g = gold[position] if position < len(gold) else None
        p = pred[position] if position < len(pred) else None
        if g != p:
            return (position, _clip(g), _clip(p))
    return None


def _sample(counts: Counter[str]) -> list[str]:
    return [_clip(value) for value in sorted(counts)[:SAMPLE_VALUES]]


def _clip(value: str | None) -> str | None:
    return None if value is None else clip(value, MAX_VALUE_CHARS)
