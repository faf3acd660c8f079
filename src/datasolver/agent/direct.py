"""The Solver's direct step (`datasolver.direct_step`): its messages, and its judge, solver.py.

On a CPU server the real 1.5B model's first reply in the loop was `run_solver` on the untouched
scaffold in 11 of 12 tasks. So a task starts with the loop's own opening (the same rules, tool schemas
and task message, so the server's prefix cache serves the loop too) plus one line asking for the answer
query, with tool calls turned off. The query goes into solver.py through the same tools the model would
call (`edit_solver` with `sql`, then `run_solver`, whose answer checks judge it), so solver.py stays the
re-runnable answer; the one chosen is published. One repair turn, then samples at
`Limits.direct_temperature` while the time left allows; agreement is the scorer's signature of
prediction.csv. When none passes, the tool loop starts and learns what was tried.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datasolver.agent.limits import Limits
from datasolver.agent.prompts import render_prompt
from datasolver.data import ScratchLayout
from datasolver.data.rules.context import ResultShape, Rewrite, RuleContext
from datasolver.data.rules.offer import empty_rewrites, error_rewrites
from datasolver.data.rules.stages import apply_on_rows
from datasolver.direct_step import Candidate, DirectTerms
from datasolver.eval import prediction_signature
from datasolver.llm import ToolCall
from datasolver.llm.text_calls import same_query
from datasolver.solver.answer_checks import check_names_in
from datasolver.solver.prediction_check import check_prediction
from datasolver.solver.tools import FOUND_NOTHING, last_query, written_query_calls
from datasolver.toolkit import ToolRunner

EVENT_DIRECT = "direct_answer"
EVENT_CANDIDATE = "direct_candidate"
VIA_DIRECT = "direct"  # tool_call events' `via` for the calls made for a direct candidate
ID_PREFIX = "direct_"
REWRITE_QUERY_TIMEOUT_S = 5.0  # each query of the diagnosis behind the program's rewrites
SOLVER_REPAIRS = 1  # one repair turn: the samples that follow draw from the same cached prompt


def direct_messages(opening: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The loop's opening with the direct instruction after the task message (same prefix)."""
    last = opening[-1]
    content = last["content"]
    instruction = "\n\n" + render_prompt("direct").strip()
    if isinstance(content, list):  # image parts: the instruction is one more text part
        content = [*content, {"type": "text", "text": instruction}]
    else:
        content = content.rstrip() + instruction
    return [*opening[:-1], {**last, "content": content}]


def solver_terms(limits: Limits, tools: list[dict[str, Any]], chat_options: dict[str, Any],
                 seconds_left: Callable[[], float | None]) -> DirectTerms:
    """The Solver's direct step: the loop's tools sent with tool calls off (the loop's prefix), one repair
    turn, `direct_samples` samples at `direct_temperature`, `reserve_seconds` kept for the loop."""
    return DirectTerms(
        render=render_prompt, repair_prompt="direct_repair", reply_tokens=limits.direct_reply_tokens,
        candidate_event=EVENT_CANDIDATE, step_event=EVENT_DIRECT, repairs=SOLVER_REPAIRS,
        samples=limits.direct_samples, warmer=limits.direct_temperature, tools=tools,
        chat_options={**chat_options, "tool_choice": "none"}, seconds_left=seconds_left,
        reserve_seconds=limits.reserve_seconds)


@dataclass
class SolverJudge:
    """A query put into solver.py and run (with the answer checks), as the model's calls would; the
    program's rewrites read the catalog, the question's links and shape (`context`)."""

    runner: ToolRunner
    layout: ScratchLayout
    context: RuleContext
    runs: int = 0
    last_sql: str | None = None  # the query whose run solver.py and prediction.csv now hold

    async def run(self, sql: str, source: str) -> Candidate:
        self.runs += 1
        self.last_sql = sql
        (edit_name, edit_args), (run_name, run_args) = written_query_calls(sql).adopt  # the registry's calls
        edit = await self.runner.run(ToolCall(f"{ID_PREFIX}{self.runs}_edit", edit_name, json.dumps(edit_args),
                                              via=VIA_DIRECT))
        if not edit.ok:
            return Candidate(sql, source, blocking=[edit.text])
        ran = await self.runner.run(ToolCall(f"{ID_PREFIX}{self.runs}_run", run_name, json.dumps(run_args),
                                             via=VIA_DIRECT))
        if not ran.ok:
            return Candidate(sql, source, blocking=[ran.text or "it did not run"])
        blocking = [f.line() for f in getattr(ran.value, "blocking", [])]
        written = check_prediction(self.layout.prediction)
        return Candidate(sql, source, ok=True, blocking=blocking,
                         found_nothing=FOUND_NOTHING in check_names_in("\n".join(blocking)),
                         signature=prediction_signature(self.layout.prediction),
                         result=ResultShape(tuple(written.columns), written.n_rows))

    async def rewrites(self, failed: Candidate) -> list[Rewrite]:
        return await asyncio.to_thread(self._rewrites, failed)

    def _rewrites(self, failed: Candidate) -> list[Rewrite]:
        """Of a query that failed, the query as written, by its error; of one that found nothing, the last
        query solver.py ran (after the data layer's repairs), diagnosed for a join that pairs nothing."""
        if not failed.ok:
            return error_rewrites(failed.sql, failed.why(), self.context)
        sql = last_query(self.layout)
        if sql is None:
            return []
        return empty_rewrites(sql, self.context, timeout_s=REWRITE_QUERY_TIMEOUT_S)

    async def row_rewrites(self, passed: Candidate) -> list[Rewrite]:
        if passed.result is None:
            return []
        return await asyncio.to_thread(apply_on_rows, passed.sql, passed.result, self.context)

    async def adopt(self, chosen: Candidate) -> bool:
        """solver.py and prediction.csv hold the last run: the chosen query is run again when another ran after it."""
        if self.last_sql is not None and same_query(self.last_sql, chosen.sql):
            return True
        return (await self.run(chosen.sql, chosen.source)).passes


__all__ = ["EVENT_CANDIDATE", "EVENT_DIRECT", "SolverJudge", "direct_messages", "solver_terms"]
