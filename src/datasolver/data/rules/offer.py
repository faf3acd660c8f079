"""The task's rewrites of one query, found and tried: what both the direct step's judge and the tool
loop ask of the rulebook for a query that failed or found nothing.

`error_rewrites` and `empty_rewrites` turn a failure into the task stage's rewrites (the error parsed
once, the empty result diagnosed); the direct step runs them as candidates. `first_with_rows` runs
them read-only, as an exploration query runs, within a small bound, and keeps the first that returns
rows: the tool loops offer it to the model beside the failure (the real 1.5B model re-sent the same
failing single-table query, or the filter that emptied its result, until the deadline; a rule's join
or respelled filter, shown with its rows, is a change it can copy).

What both tool loops (the Solver's, `solver/tools/offer.py`; the analyst's, `ask/offer.py`) share is
here too: `QueryOffers` finds and tries one query's offer and remembers it by the query (sent again,
it is answered from memory, nothing run again), `offer_text` writes the part of the tool result's
addition that names no tool (the rule, its reason, the SQL, the first rows), and `Tried.event` the
fields of each rewrite's `EVENT_RULE_REWRITE` trace event. Which tool's outcome asks for an offer, and
what the model is told to do with it, are each loop's room's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from datasolver.clip import clip

from datasolver.data.duck_errors import parse_duck_error
from datasolver.data.empty_result import QUERY_TIMEOUT_S, TOTAL_BUDGET_S, counts_zero, explain_empty
from datasolver.data.results import render_result
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
SHOWN_SQL_CHARS = 2_000  # of the rewrite's SQL, in the tool result
SHOWN_ROWS_CHARS = 1_200  # of its rows' preview
OFFERS_KEPT = 64  # offers remembered by their query (a query sent again is answered from memory)
TRACED_SQL_CHARS = 2_000  # of a rewrite's SQL, in a trace event
TRACED_TEXT_CHARS = 500  # of its reason or its error, in a trace event
EVENT_RULE_REWRITE = "rule_rewrite"  # one of the program's rewrites of a failed or empty query, run (its rule named)
EVENT_REWRITE_OFFERED = "rewrite_offered"  # the rewrite that returned rows, appended to the tool result
CUT_LINE_CHARS = 200  # room for the line that says a tool result was cut, beside the rewrite


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

    def event(self) -> dict[str, Any]:
        """The fields of its `EVENT_RULE_REWRITE` trace event: the rule, why, the SQL, its rows or its error."""
        return {"rule": self.rewrite.rule, "reason": clip(self.rewrite.reason, TRACED_TEXT_CHARS),
                "sql": clip(self.rewrite.sql, TRACED_SQL_CHARS), "rows": self.rows,
                "error": clip(self.error, TRACED_TEXT_CHARS) if self.error is not None else None}


@dataclass(frozen=True)
class Offer:
    """The rewrites run for one query, in order, and the first that returned rows (its result: the first
    `PREVIEW_ROWS` rows and the total)."""

    tried: tuple[Tried, ...] = ()
    found: Rewrite | None = None
    result: QueryResult | None = None
    again: bool = False  # made before for the same query: answered from memory, nothing run (`tried` empty)


def found_nothing(sql: str, rows: Sequence[Sequence[object]], total_rows: int) -> tuple[str, None, bool] | None:
    """(`sql`, no error, whether a count came out 0) when its result of `total_rows` rows (`rows`: the first
    ones) found nothing, so asks for an offer: no rows, or all of them read and a count of 0; else None."""
    zero_count = total_rows == len(rows) and counts_zero(sql, rows)
    return (sql, None, zero_count) if total_rows == 0 or zero_count else None


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


@dataclass
class QueryOffers:
    """The offers of one solve or one question: the task's rule context (the one its direct step's judge
    reads, built by the caller) and the offers made so far, by query."""

    context: Callable[[], RuleContext]
    made: dict[str, Offer] = field(default_factory=dict)

    def offer(self, query: str, error: str | None, *, zero_count: bool = False) -> Offer:
        """The offer for `query`, which failed with `error` (DuckDB's text) or, with `error` None, found
        nothing (with `zero_count`: a count of 0): its rewrites found as the direct step's judge finds them
        (the diagnosis behind the on-empty ones within `DIAGNOSIS_BUDGET_S`) and tried by `first_with_rows`.
        The same query failing the same way again is answered with the offer made before (`again`)."""
        key = f"{'error' if error is not None else 'empty'} {' '.join(query.split()).rstrip(';')}"
        earlier = self.made.get(key)
        if earlier is not None:
            return replace(earlier, tried=(), again=True)
        context = self.context()
        rewrites = (error_rewrites(query, error, context) if error is not None else
                    empty_rewrites(query, context, zero_count=zero_count, timeout_s=DIAGNOSIS_QUERY_S,
                                   budget_s=DIAGNOSIS_BUDGET_S))
        made = first_with_rows(context.catalog, rewrites)
        if len(self.made) < OFFERS_KEPT:
            self.made[key] = made
        return made


def offer_text(offer: Offer) -> str:
    """What every tool result with an offer gains first (its room then says what to do with it): which rule
    rewrote the query and why, the rewrite, its first rows; "" when no rewrite returned rows."""
    if offer.found is None or offer.result is None:
        return ""
    return (f"\nThe program rewrote your query (rule {offer.found.rule}: {offer.found.reason}) and the rewrite "
            f"returns rows:\n```sql\n{clip(offer.found.sql.strip(), SHOWN_SQL_CHARS)}\n```\n"
            f"{clip(render_result(offer.result), SHOWN_ROWS_CHARS)}\n")


__all__ = ["DIAGNOSIS_BUDGET_S", "DIAGNOSIS_QUERY_S", "EVENT_REWRITE_OFFERED", "EVENT_RULE_REWRITE", "Offer",
           "QueryOffers", "Tried", "empty_rewrites", "error_rewrites", "first_with_rows", "found_nothing",
           "offer_text"]


def beside_result(result: str, addition: str, limit: int, note: str = "") -> str:
    """A tool result with the offer's `addition` after it, the result cut first (with `note`) so that the
    addition survives a result of `limit` characters."""
    room = max(limit - len(addition) - CUT_LINE_CHARS, CUT_LINE_CHARS)
    return (clip(result, room, note=note) if len(result) > room else result) + addition
