"""The cheapest path first: one direct answer query before the tool loop, and execution choosing
among candidates when it fails.

Small models write a ```sql block well and call tools poorly (on a CPU server the real 1.5B model's
first reply was `run_solver` on the untouched scaffold in 11 of 12 tasks). So a task starts with
the loop's own opening (the same rules, tool schemas and task message, so the server's prefix cache
serves the loop too) plus one line asking for the answer query, with tool calls turned off. The
query goes into solver.py through the same tools the model would call (`edit_solver` with `sql`,
then `run_solver`, whose answer checks judge it) and is published when it passes.

When it fails (an error, no rows, a blocking `CHECK` line), the model gets one repair turn with
what went wrong, and further queries are sampled from the same cached prompt at a higher
temperature, as many as the time left allows. Execution chooses: among the candidates that pass
the checks, the answer most of them agree on (the scorer's signature of prediction.csv); a tie goes
to the earliest. When none passes, the tool loop starts and learns what was tried.

A candidate about to be chosen is given to the program's on-rows rules first (`rules.apply_on_rows`:
what the question asks that a query with rows does not answer, e.g. the periods of look-alike tables it
did not read); a rewrite of it that passes the answer checks is chosen in its place.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.agent.limits import Limits
from datasolver.agent.prompts import render_prompt
from datasolver.clip import clip
from datasolver.eval import prediction_signature
from datasolver.llm import NULL_TRACE, LLMClient, LLMError, ToolCall, TraceWriter, user_message
from datasolver.llm.text_calls import reply_query, same_query
from datasolver.data.rules.context import ResultShape, Rewrite
from datasolver.solver.answer_checks import check_names_in
from datasolver.solver.prediction_check import check_prediction
from datasolver.solver.tools import written_query_calls
from datasolver.toolkit import ToolRunner

EVENT_DIRECT = "direct_answer"
EVENT_CANDIDATE = "direct_candidate"
VIA_DIRECT = "direct"  # tool_call events' `via` for the calls made for a direct candidate
ID_PREFIX = "direct_"
REPORT_CHARS = 1_500  # of a failed candidate's run report, in the repair turn
ROWS_SOURCE = "rows rewrite"  # the source of a candidate an on-rows rule wrote
FOUND_NOTHING = "empty_result"  # the check of a query that found nothing (no rows, NULLs, a count of 0 of no rows)


@dataclass
class Candidate:
    """One answer query and what running it through solver.py and the answer checks said."""

    sql: str
    source: str  # direct | repair | sample N
    ok: bool = False  # run_solver said OK (prediction.csv written)
    blocking: list[str] = field(default_factory=list)  # CHECK lines that send a model back
    report: str = ""  # run_solver's text
    signature: str | None = None  # the scorer's view of prediction.csv (eval.prediction_signature)
    result: ResultShape | None = None  # prediction.csv's columns and rows, when it ran OK

    @property
    def passes(self) -> bool:
        return self.ok and not self.blocking

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "sql": clip(self.sql, 2000), "ok": self.ok, "passes": self.passes,
                "blocking": [clip(line, 300) for line in self.blocking], "signature": self.signature}


@dataclass
class DirectOutcome:
    """What the direct path came to: the chosen candidate (None: the loop takes over) and why."""

    candidates: list[Candidate] = field(default_factory=list)
    chosen: Candidate | None = None
    how: str = ""
    requests: int = 0

    def lessons(self) -> list[str]:
        """One line per failed query, for the loop's opening (what was tried and why it failed)."""
        lines = []
        for c in self.candidates:
            if c.passes:
                continue
            why = "; ".join(c.blocking) if c.ok else c.report.splitlines()[0] if c.report else "it did not run"
            lines.append(f"`{clip(' '.join(c.sql.split()), 300)}` → {clip(why, 300)}")
        return list(dict.fromkeys(lines))


@dataclass
class DirectPath:
    """The direct path of one task: the opening to extend, the model, the tools, the budgets."""

    opening: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    client: LLMClient
    runner: ToolRunner
    limits: Limits
    prediction: Path
    trace: TraceWriter = NULL_TRACE
    chat_options: dict[str, Any] = field(default_factory=dict)
    outcome: DirectOutcome = field(default_factory=DirectOutcome)
    seconds_per_sample: float | None = None  # measured on the first reply: what one more query costs
    seconds_left: Callable[[], float | None] = lambda: None  # to the task's deadline (None: no deadline)
    rewrites: Callable[[Candidate], list[Rewrite]] = lambda failed: []
    """The program's rewrites of a failed candidate (`datasolver.data.rules`: of the query that ran, when it
    found nothing; of the query written, when it failed at a piece of a column name): tried before the
    repair request, each a candidate like the model's."""
    row_rewrites: Callable[[Candidate], list[Rewrite]] = lambda passed: []
    """The program's rewrites of a candidate with rows about to be chosen (`datasolver.data.rules.apply_on_rows`),
    each run as a candidate; the first that passes the answer checks is chosen in its place."""

    async def run(self) -> DirectOutcome:
        """The direct query, a repair when it fails, then samples while time allows; the chosen
        candidate's query is left in solver.py with its prediction.csv."""
        messages = self._messages()
        first = await self._ask(messages, "direct", temperature=None)
        if first is not None and first.passes:
            return await self._choose(first, "the direct query passed the answer checks")
        if first is not None and (not first.ok or FOUND_NOTHING in check_names_in("\n".join(first.blocking))):
            rewritten = await self._rewritten(first)
            if rewritten is not None:
                return rewritten
        if first is not None and self._time_for_one_more():
            repair = await self._ask(self._repair_messages(messages, first), "repair", temperature=None)
            if repair is not None and repair.passes:
                return await self._choose(repair, "the repaired query passed the answer checks")
        # A first reply with no query at all: the model wants to explore; the loop serves it better.
        samples = self.limits.direct_samples if first is not None else 0
        for number in range(1, samples + 1):
            if not self._time_for_one_more():
                break
            await self._ask(messages, f"sample {number}", temperature=self.limits.direct_temperature)
            if self._agreeing() >= 2:
                break
        chosen, how = choose(self.outcome.candidates)
        if chosen is not None:
            return await self._choose(chosen, how)
        self._event(chosen=None, how=how)
        return self.outcome

    async def _rewritten(self, failed: Candidate, depth: int = 0) -> DirectOutcome | None:
        """The program's rewrites of the query that failed or found nothing, each run as a candidate
        (no request); the first that passes the answer checks is chosen. A rewrite of a failed query that
        runs and finds nothing has its own rewrites tried too, once (v1800: the offered column put in a
        join that pairs nothing, then answered from the one table that holds it)."""
        for number, rewrite in enumerate(await asyncio.to_thread(self.rewrites, failed), 1):
            sql, how = rewrite.sql, rewrite.reason
            if any(same_query(c.sql, sql) for c in self.outcome.candidates):
                continue
            source = f"rewrite {number}" if depth == 0 else f"rewrite {len(self.outcome.candidates)}"
            candidate = await self._try(sql, source)
            self.outcome.candidates.append(candidate)
            self._event(**candidate.as_dict(), rewritten=how, rule=rewrite.rule)
            if candidate.passes:
                return await self._choose(candidate, f"the program's rewrite passed the answer checks ({how})")
            if (depth == 0 and not failed.ok and candidate.ok
                    and FOUND_NOTHING in check_names_in("\n".join(candidate.blocking))):
                chosen = await self._rewritten(candidate, depth + 1)
                if chosen is not None:
                    return chosen
        return None

    def _messages(self) -> list[dict[str, Any]]:
        """The loop's opening with the direct instruction after the task message (same prefix)."""
        last = self.opening[-1]
        content = last["content"]
        instruction = "\n\n" + render_prompt("direct").strip()
        if isinstance(content, list):  # image parts: the instruction is one more text part
            content = [*content, {"type": "text", "text": instruction}]
        else:
            content = content.rstrip() + instruction
        return [*self.opening[:-1], {**last, "content": content}]

    def _repair_messages(self, messages: list[dict[str, Any]], failed: Candidate) -> list[dict[str, Any]]:
        what = "; ".join(failed.blocking) if failed.ok else clip(failed.report, REPORT_CHARS)
        return [*messages, {"role": "assistant", "content": f"```sql\n{failed.sql}\n```"},
                user_message(render_prompt("direct_repair", what=what).strip())]

    async def _ask(self, messages: list[dict[str, Any]], source: str, temperature: float | None) -> Candidate | None:
        """One request; its query (if any) run as a candidate. None when the reply had no query."""
        options = {**self.chat_options, "tool_choice": "none", "max_tokens": self.limits.direct_reply_tokens}
        if temperature is not None:
            options["temperature"] = temperature
        left = self.seconds_left()
        try:
            result = await self.client.chat(messages, self.tools, **options) if left is None or left > 0 else None
        except LLMError as exc:
            self._event(source=source, error=f"{type(exc).__name__}: {exc}")
            return None
        if result is None:
            return None
        self.outcome.requests += 1
        if self.seconds_per_sample is None and result.usage.completion_tokens:
            generation = max(result.latency_s - (result.prefill_s or 0.0), 0.1)
            self.seconds_per_sample = generation + 5.0  # a sample's reply, plus its run and checks
        sql = query_of(result)
        if sql is None:
            self._event(source=source, query=None, reply=clip(result.content, 500))
            return None
        for earlier in self.outcome.candidates:
            if same_query(earlier.sql, sql):  # the same query again: its verdict stands
                repeat = Candidate(sql, source, earlier.ok, list(earlier.blocking), earlier.report, earlier.signature,
                                   earlier.result)
                self.outcome.candidates.append(repeat)
                self._event(repeated=earlier.source, **repeat.as_dict())
                return repeat
        candidate = await self._try(sql, source)
        self.outcome.candidates.append(candidate)
        self._event(**candidate.as_dict())
        return candidate

    async def _try(self, sql: str, source: str) -> Candidate:
        """The query put into solver.py and run (with the answer checks), as the model's calls would."""
        number = len(self.outcome.candidates) + 1
        (edit_name, edit_args), (run_name, run_args) = written_query_calls(sql).adopt  # the registry's calls
        edit = await self.runner.run(ToolCall(f"{ID_PREFIX}{number}_edit", edit_name, json.dumps(edit_args),
                                              via=VIA_DIRECT))
        if not edit.ok:
            return Candidate(sql, source, report=edit.text)
        ran = await self.runner.run(ToolCall(f"{ID_PREFIX}{number}_run", run_name, json.dumps(run_args),
                                             via=VIA_DIRECT))
        candidate = Candidate(sql, source, ok=ran.ok, report=ran.text)
        if ran.ok:
            report = ran.value
            candidate.blocking = [f.line() for f in getattr(report, "blocking", [])]
            candidate.signature = prediction_signature(self.prediction)
            written = check_prediction(self.prediction)
            candidate.result = ResultShape(tuple(written.columns), written.n_rows)
        return candidate

    def _time_for_one_more(self) -> bool:
        left = self.seconds_left()
        if left is None:
            return True
        # Keep room for the loop (or a fallback) after the direct path.
        need = (self.seconds_per_sample or 30.0) + self.limits.reserve_seconds
        return left > need

    def _agreeing(self) -> int:
        counts = Counter(c.signature for c in self.outcome.candidates if c.passes and c.signature)
        return max(counts.values(), default=0)

    async def _choose(self, candidate: Candidate, how: str) -> DirectOutcome:
        """Leave `candidate`'s query in solver.py with its prediction.csv (run again when a later
        candidate ran after it); an on-rows rewrite of it that passes the checks is chosen in its place."""
        better = await self._rows_rewritten(candidate)
        if better is not None:
            candidate, how = better
        last = self.outcome.candidates[-1] if self.outcome.candidates else None
        if last is not None and not same_query(last.sql, candidate.sql):
            again = await self._try(candidate.sql, candidate.source)
            if not again.passes:  # it passed a moment ago: say so, and let the loop take over
                self._event(chosen=None, how=f"{candidate.source} no longer passes when run again")
                return self.outcome
        self.outcome.chosen, self.outcome.how = candidate, how
        self._event(chosen=candidate.source, how=how, signature=candidate.signature)
        return self.outcome

    async def _rows_rewritten(self, passed: Candidate) -> tuple[Candidate, str] | None:
        """The first of the program's on-rows rewrites of `passed` that passes the answer checks, and why;
        None when none does (or `passed` is such a rewrite itself)."""
        if passed.source.startswith(ROWS_SOURCE) or passed.result is None or not passed.result.rows:
            return None
        for number, rewrite in enumerate(await asyncio.to_thread(self.row_rewrites, passed), 1):
            if any(same_query(c.sql, rewrite.sql) for c in self.outcome.candidates):
                continue
            candidate = await self._try(rewrite.sql, f"{ROWS_SOURCE} {number}")
            self.outcome.candidates.append(candidate)
            self._event(**candidate.as_dict(), rewritten=rewrite.reason, rule=rewrite.rule)
            if candidate.passes:
                return candidate, (f"the program's rewrite of the {passed.source} query passed the answer checks "
                                   f"({rewrite.reason})")
        return None

    def _event(self, **fields: Any) -> None:
        self.trace.event(EVENT_CANDIDATE if "ok" in fields else EVENT_DIRECT, **fields)


def choose(candidates: list[Candidate]) -> tuple[Candidate | None, str]:
    """The candidate execution chooses: among those that pass the checks, the answer most agree
    on (a tie: the earliest); None when none passes."""
    passing = [c for c in candidates if c.passes and c.signature]
    if not passing:
        return None, f"none of {len(candidates)} candidate queries passed the answer checks"
    counts = Counter(c.signature for c in passing)
    best = max(counts.values())
    chosen = next(c for c in passing if counts[c.signature] == best)
    return chosen, f"{best} of {len(candidates)} candidate queries agree (and pass the answer checks)"


def best_failing(candidates: list[Candidate]) -> Candidate | None:
    """At the deadline: the best of the candidates that wrote an answer (fewest blocking checks)."""
    ran = [c for c in candidates if c.ok]
    return min(ran, key=lambda c: len(c.blocking)) if ran else None


def query_of(result: Any) -> str | None:
    """The query a reply gives (`llm.text_calls.reply_query`)."""
    return reply_query(result.content, result.tool_calls)
