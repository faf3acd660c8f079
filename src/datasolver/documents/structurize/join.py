"""Join part tables on record id; a later part's value wins (documents correct themselves later)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from datasolver.documents.structurize.plan import Plan
from datasolver.documents.structurize.workers import PartResult

PROVENANCE_COLUMNS = ["record_id", "column", "value", "location", "replaced"]


@dataclass
class Joined:
    """The joined table (id column first) and, kept apart, where each value came from."""

    columns: list[str]
    rows: list[list[str]]
    provenance: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def join_parts(plan: Plan, results: list[PartResult], location: Callable[[int, int], str]) -> Joined:
    """One row per record id (planner's order); `location(first_line, last_line)` names a part."""
    columns = plan.column_names()
    cells: dict[tuple[str, str], tuple[str, str, list[str]]] = {}
    for res in sorted(results, key=lambda r: r.part.index):
        where = location(res.part.first_line, res.part.last_line)
        for rid, values in res.values.items():
            for col, value in values.items():
                old = cells.get((rid, col))
                replaced = list(old[2]) if old else []
                if old and old[0] != value:
                    replaced.append(f"{old[0]} ({old[1]})")
                cells[(rid, col)] = (value, where, replaced)
    joined = Joined([plan.record_id_column] + columns, [])
    extra = set(plan.extra_ids)
    dropped = []
    for rid in plan.all_ids():
        row = [cells.get((rid, c), ("", "", []))[0] for c in columns]
        if rid in extra and not any(row):
            dropped.append(rid)
            continue
        joined.rows.append([rid] + row)
        for c in columns:
            if (rid, c) in cells:
                value, where, replaced = cells[(rid, c)]
                joined.provenance.append([rid, c, value, where, "; ".join(replaced)])
    if dropped:
        joined.warnings.append(f"{len(dropped)} id(s) found only by parts had no values and were dropped")
    empty = [c for i, c in enumerate(columns, start=1) if not any(r[i] for r in joined.rows)]
    if empty:
        joined.warnings.append(f"columns with no value at all: {', '.join(empty)}")
    return joined
