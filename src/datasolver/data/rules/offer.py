"""The task's rewrites of one query, found and tried: what both the direct step's judge and the tool
loop ask of the rulebook for a query that failed or found nothing.

`error_rewrites` and `empty_rewrites` turn a failure into the task stage's rewrites (the error parsed
once, the empty result diagnosed); the direct step runs them as candidates. `first_with_rows` runs
them read-only, as an exploration query runs, within a small bound, and keeps the first that returns
rows: the tool loop offers it to the model beside the failure (the real 1.5B model re-sent the same
failing single-table query, or the filter that emptied its result, until the deadline; a rule's join
or respelled filter, shown with its rows, is a change it can copy).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from datasolver.data.duck_errors import parse_duck_error
from datasolver.data.empty_result import QUERY_TIMEOUT_S, TOTAL_BUDGET_S, counts_zero, explain_empty
from datasolver.data.rules.context import Rewrite, RuleContext
from datasolver.data.rules.stages import apply_on_empty, apply_on_error
from datasolver.errors import DatasolverError

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog
    from datasolver.data.results import QueryResult

REWRITES_RUN = 3
"""At most this many rewrites are run for one failed query: the rules write their likeliest repair
first (a stage's tuple is in the order to try), and each run costs a query's time in the loop."""
OFFER_BUDGET_S = 4.0
"""All the runs of one offer together: past this, no further rewrite starts (a tool call stays quick;
an exploration query's empty-result diagnosis is bounded alike)."""
REWRITE_QUERY_S = 2.0  # each rewrite's run
PREVIEW_ROWS = 5  # rows of the rewrite's result kept for the model
DIAGNOSIS_QUERY_S = 2.0  # each query of the diagnosis behind the on-empty rewrites of an offer
DIAGNOSIS_BUDGET_S = 4.0  # that whole diagnosis


def error_rewrites(sql: str, error: str, context: RuleContext) -> list[Rewrite]:
    """The on-error rewrites of `sql`, which failed with `error` (DuckDB's text, read once), in the order to try."""
    return apply_on_error(sql, parse_duck_error(error), context)


def empty_rewrites(sql: str, context: RuleContext, *, zero_count: bool = False, timeout_s: float = QUERY_TIMEOUT_S,
                   budget_s: float = TOTAL_BUDGET_S) -> list[Rewrite]:
    """The on-empty rewrites of `sql`, whose filters found nothing (with `zero_count`: a count of 0), with
    why it is empty (`explain_empty`, each query under `timeout_s`, all under `budget_s`) in the context."""
    diagnosis = explain_empty(context.catalog, sql, zero_count=zero_count, timeout_s=timeout_s, budget_s=budget_s)
    return apply_on_empty(sql, replace(context, diagnosis=diagnosis))


@dataclass(frozen=True)
class Tried:
    """One rewrite run: how many rows it returned, or why it did not run."""

    rewrite: Rewrite
    rows: int | None = None
    error: str | None = None

    @property
    def found(self) -> bool:
        return bool(self.rows)


@dataclass(frozen=True)
class Offer:
    """The rewrites run for one query, in order, and the first that returned rows (its result: the first
    `PREVIEW_ROWS` rows and the total)."""

    tried: tuple[Tried, ...] = ()
    found: Rewrite | None = None
    result: QueryResult | None = None


def first_with_rows(catalog: Catalog, rewrites: list[Rewrite], *, runs: int = REWRITES_RUN,
                    budget_s: float = OFFER_BUDGET_S, clock: Callable[[], float] = time.monotonic) -> Offer:
    """Run `rewrites` in order, read-only, at most `runs` of them and none started past `budget_s`, until one
    returns rows (a count that comes out 0 over no rows is none)."""
    ends, tried = clock() + budget_s, []
    for rewrite in rewrites[:runs]:
        left = ends - clock()
        if left <= 0:
            break
        try:
            result = catalog.query(rewrite.sql, limit=PREVIEW_ROWS, timeout_s=min(REWRITE_QUERY_S, left))
        except DatasolverError as exc:
            tried.append(Tried(rewrite, error=f"{type(exc).__name__}: {exc}"))
            continue
        rows = 0 if counts_zero(rewrite.sql, result.rows) and result.total_rows == len(result.rows) else result.total_rows
        tried.append(Tried(rewrite, rows=rows))
        if rows:
            return Offer(tuple(tried), rewrite, result)
    return Offer(tuple(tried))


__all__ = ["DIAGNOSIS_BUDGET_S", "DIAGNOSIS_QUERY_S", "Offer", "Tried", "empty_rewrites", "error_rewrites", "first_with_rows"]
