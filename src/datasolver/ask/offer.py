"""The program's rewrite offered beside a query of the analyst's that failed or found nothing, in its tool loop.

The direct step's judge (`ask/direct.py`, `AskJudge`) gives a failed or empty query to the task's rewrite
rules before it asks the model again; the tool loop that takes over when no direct query answers had no
rules, and a small model re-sends the same failing single-table query, or the filter that emptied its
result (the Solver's loop saw the real 1.5B model do it until the deadline). So the same rules answer
the loop's `query` calls (the model's own, or a query written in a reply and run as one): a query that
failed with DuckDB's error, or whose result has no rows or is a count of 0 over no rows, gets its
rewrites found and tried by `data.rules.offer` (`QueryOffers`: within its bounds, the same query failing
again answered from memory), and the first that returns rows is appended to the tool result
(`offer_text`: its rule, its reason, its SQL, its first rows) with what to do in this room's words.

The rewrite is shown, not stored: `@latest` (final_answer's default `data`, the evidence of a plain-text
answer, the result the answer checks read) stays the model's own latest result, and the model stores
the rewrite with one `query` call of the SQL shown. A query over stored results (`@N`) gets no offer:
the rules read the catalog's tables, and a rewrite would spell a result's internal view name.

Which call's outcome asks for an offer, and the words naming the tools, are this room's; the loop
(`ask/loop.py`) calls `AskOffers` after each call, traces what was tried and appends the text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from datasolver.ask.errors import AskError
from datasolver.ask.handles import Handle
from datasolver.ask.refs import substitute_refs
from datasolver.ask.toolbox import FINAL_ANSWER, QUERY_TOOL
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.offer import Offer, QueryOffers, found_nothing, offer_text
from datasolver.toolkit import ToolCall, ToolOutcome

TO_DO = (f"If these rows answer the question, call {QUERY_TOOL} with this SQL (its result is stored as a new @N), "
         f"then give {FINAL_ANSWER} from that result.")  # after the rewrite (`data.rules.offer.offer_text`)


@dataclass
class AskOffers:
    """The offers of one question: the rule context its direct step's judge reads (`ask/direct.rule_context`)
    and the offers made so far, by query."""

    context: Callable[[], RuleContext]
    offers: QueryOffers = field(init=False)

    def __post_init__(self) -> None:
        self.offers = QueryOffers(self.context)

    def __call__(self, call: ToolCall, outcome: ToolOutcome) -> Offer | None:
        """The offer for one call's outcome (`found` None: no rewrite returned rows); None when it asks for
        none (another tool, a query with rows, a query over stored results)."""
        failure = failed_query(outcome)
        if failure is None:
            return None
        query, error, zero_count = failure
        return self.offers.offer(query, error, zero_count=zero_count)


def failed_query(outcome: ToolOutcome) -> tuple[str, str | None, bool] | None:
    """(the query, the error or None for no rows, whether a count came out 0) of a `query` call whose query
    failed or found nothing; None for any other call. A failed query is taken as written, an empty one as
    its result ran (after the data layer's repairs), as the direct step's judge takes them."""
    if outcome.name != QUERY_TOOL:
        return None
    if not outcome.ok:
        sql = getattr(outcome.args, "sql", None)
        if not outcome.refused or not isinstance(sql, str) or names_results(sql):
            return None
        return sql, outcome.text, False
    handle = outcome.value
    if not isinstance(handle, Handle) or handle.parents:
        return None
    return found_nothing(handle.sql, handle.sample, handle.rows)


def names_results(sql: str) -> bool:
    """Whether `sql` reads a stored result (`@N`, `@latest`) or spells a result's internal name."""
    try:
        return bool(substitute_refs(sql, lambda _ref: "")[1])
    except AskError:
        return True


def offer_addition(offer: Offer) -> str:
    """What the tool result gains: the rewrite with its rows, and what to do with it ("" for no rewrite)."""
    text = offer_text(offer)
    return text + TO_DO if text else ""


__all__ = ["AskOffers", "failed_query", "offer_addition"]
