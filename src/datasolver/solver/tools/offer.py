"""The program's rewrite offered beside a query of the model's that failed or found nothing, in the tool loop.

The direct step gives a failed or empty candidate to the task's rewrite rules (`data/rules/stages.py`)
before it asks the model again. Once the tool loop takes over, the real 1.5B model re-sent the same
failing single-table query, or the filter that emptied its result, until the deadline. So here the
same rules answer the loop's queries: an explore_data query that failed or found nothing, and the
query of solver.py when run_solver failed or its answer found nothing (the `empty_result` check). The
rewrites run read-only as explore_data runs a query, within `data.rules.offer`'s bounds, and the first
that returns rows is appended to the tool result with its rule, its reason, its SQL, its first rows
(`data.rules.offer.offer_text`, the analyst's loop writes them alike) and what to do with it. solver.py
is never changed: the model puts the query there, or not.

Which tool's outcome asks for an offer, and the words naming the tools, are this room's; the loop
(`agent/loop.py`) only calls `RewriteOffers` after each call, traces what was tried and appends the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from datasolver.data import QueryResult
from datasolver.data.layout import ScratchLayout
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.offer import QueryOffers, Tried, found_nothing, offer_text
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.answer_checks import CheckReport, read_query_log
from datasolver.solver.scaffold import query_area
from datasolver.solver.tools.registry import sent_query
from datasolver.toolkit import ToolCall, ToolOutcome

FOUND_NOTHING = "empty_result"  # the answer check of a query that found nothing (no rows, NULLs, a count of 0)
QUERY_LOG_CAP = 1 << 20  # bytes of solver.py's query log read for its last query
SOLVER_CAP = 1 << 20  # bytes of solver.py read for its query
TO_DO = ("If these rows answer the question, put this query into solver.py with edit_solver (its `sql` "
         "argument), then call run_solver.")  # after the rewrite (`data.rules.offer.offer_text`)
_RUN_SQL = re.compile(r'run_sql\(\s*(?:[rRuU]?)("""|\'\'\'|"|\')(.*?)\1\s*[,)]', re.DOTALL)


@dataclass(frozen=True)
class OfferedRewrite:
    """What the program did for one failed or empty query: the rewrites it ran (none when it had made this
    offer before), the one that returned rows (None: none did), and the text the tool result gains."""

    query: str
    tried: tuple[Tried, ...] = ()
    sql: str | None = None  # the rewrite that returned rows
    rule: str | None = None  # the rule that wrote it
    text: str = ""
    again: bool = False  # made before for the same query: nothing run again


@dataclass
class RewriteOffers:
    """The offers of one solve: its scratch folder (solver.py and its query log), the task's rule context
    (the direct step's, `RuleContext`), and the offers made so far by query (`data.rules.offer.QueryOffers`)."""

    layout: ScratchLayout
    context: Callable[[], RuleContext]
    offers: QueryOffers = field(init=False)

    def __post_init__(self) -> None:
        self.offers = QueryOffers(self.context)

    def __call__(self, call: ToolCall, outcome: ToolOutcome) -> OfferedRewrite | None:
        """The offer for one call's outcome; None when it asks for none (it answered, or sent no query)."""
        failure = self._failure(call, outcome)
        if failure is None:
            return None
        query, error, zero_count = failure
        offer = self.offers.offer(query, error, zero_count=zero_count)
        found = offer.found
        text = offer_text(offer) + TO_DO if found is not None and offer.result is not None else ""
        return OfferedRewrite(query, offer.tried, found.sql if found else None, found.rule if found else None, text,
                              again=offer.again)

    def _failure(self, call: ToolCall, outcome: ToolOutcome) -> tuple[str, str | None, bool] | None:
        """(the query, DuckDB's error or None for no rows, whether a count came out 0) of a call whose query
        failed or found nothing; None for any other call."""
        query = sent_query(call)
        if query is not None:  # explore_data's SQL
            value = outcome.value
            if not outcome.ok:
                return (query, outcome.text, False) if outcome.refused else None
            return found_nothing(query, value.rows, value.total_rows) if isinstance(value, QueryResult) else None
        if not outcome.submits:
            return None
        if not outcome.ok:  # run_solver FAILED: the query written in solver.py, by its error
            written = solver_query(self.layout)
            return (written, outcome.text, False) if written is not None and outcome.kind == "failed" else None
        report = outcome.value
        if isinstance(report, CheckReport) and any(f.name == FOUND_NOTHING for f in report.blocking):
            ran = last_query(self.layout)  # as it ran, after the data layer's repairs
            return (ran, None, False) if ran is not None else None
        return None


def last_query(layout: ScratchLayout) -> str | None:
    """The last query solver.py's run_sql ran (its query log is the sandbox's: read capped, no link)."""
    try:
        text = safe_files.read_text(layout.query_log, max_bytes=QUERY_LOG_CAP, errors="replace")
    except (OSError, UnsafeFile):
        return None
    queries = read_query_log(text)
    return queries[-1] if queries else None


def solver_query(layout: ScratchLayout) -> str | None:
    """The last query solver.py's query area gives run_sql as a string literal (a failed query is in no
    log); None when it gives none (solver.py is the sandbox's: read capped, no link)."""
    try:
        code = safe_files.read_text(layout.solver_py, max_bytes=SOLVER_CAP, errors="replace")
    except (OSError, UnsafeFile):
        return None
    lines = code.split("\n")
    area = query_area(lines)
    if area is not None:
        code = "\n".join(lines[area[0] - 1:area[1]])
    found = _RUN_SQL.findall(code)
    return found[-1][1].strip() or None if found else None


__all__ = ["FOUND_NOTHING", "OfferedRewrite", "RewriteOffers", "last_query", "solver_query"]
