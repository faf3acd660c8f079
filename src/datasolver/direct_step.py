"""The one direct step of both agents: ask for one query, run it, rewrite it, repair it, choose by execution.

Small models write a ```sql block well and call tools poorly, so the Solver and the analyst both start
with ONE request, tools off, for the query whose result is the answer. What they share is here, once:

- the first request (the caller's messages, tools off), its query run as a candidate;
- a candidate that failed or found nothing is given to the program's rewrites first
  (`datasolver.data.rules`), each run as a candidate, no request spent; a rewrite of a failed query that
  runs and finds nothing has its own rewrites tried, once (`REWRITE_DEPTH`);
- then up to `DirectTerms.repairs` repair turns in the same conversation (a server that caches the
  prompt's prefix reads only the new turn), each told what went wrong; a query written again is not
  run again (its verdict stands), and the next turn says so and is sampled warmer;
- then, while time allows, samples of the first request at a higher temperature, stopping once two agree;
  a sample that failed or found nothing gets the program's rewrites too (the real 1.5B model's samples
  joined a link table's two sides directly and wrote snake_case names over CamelCase columns, which the
  rules repair without a request);
- execution chooses (`choose`): among the candidates that pass, the answer most agree on, a tie to the
  earliest; the program's on-rows rewrites of the candidate about to be chosen are tried first, and one
  that passes is chosen in its place.

What differs between the agents is a parameter: how a query is run and judged, and which rewrites
the program offers (`Judge`: the Solver's solver.py and answer checks, the analyst's stored results and
evidence rules), and the terms (`DirectTerms`: repair turns, samples, temperatures, the reply's tokens,
the repair prompt, time and request budgets, the trace events' names). The callers build the messages.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from datasolver.clip import clip
from datasolver.data.rules.context import ResultShape, Rewrite
from datasolver.llm import LLMClient, LLMError, user_message
from datasolver.llm.text_calls import reply_query, same_query

FIRST = "direct"  # the source of the first request's candidate
REPAIR = "repair"  # of a repair turn's
SAMPLE = "sample"  # of a sample's, numbered
REWRITE = "rewrite"  # of the program's rewrite of a failed or empty candidate, numbered
ROWS_REWRITE = "rows rewrite"  # of the program's on-rows rewrite of a candidate about to be chosen, numbered
REWRITE_DEPTH = 1
"""How often a rewrite's own rewrites are tried: once (v1800: the offered column put in a join that pairs
nothing, then answered from the one table that holds it)."""
AGREEING = 2  # samples stop once this many passing candidates agree
PROBLEM_CHARS = 1_500  # of why a candidate is no answer, in the repair turn
LESSON_SQL_CHARS = 300  # of a failed query, in a lesson
LESSON_WHY_CHARS = 400  # of why it failed, in a lesson (on one line)
SHOWN_SQL_CHARS = 2_000  # of a candidate's query, in the trace
SHOWN_LINE_CHARS = 300  # of each line of why, in the trace
SHOWN_REPLY_CHARS = 500  # of a reply with no query, in the trace
FIRST_GUESS_S = 30.0  # what one more request costs before the first reply has measured it
RUN_S = 5.0  # a candidate's run and checks, on top of its reply
MIN_GENERATION_S = 0.1
REPEATED = ("That is the query you wrote before. Write a different one: a filter value as the data spells it, "
            "another column, or another table of the message.")
"""Told in the repair turn after a query written again: at temperature 0 the real 1.5B model wrote one
failing query three times running (benchmark tasks v256, v2640), the send-back notwithstanding."""


@dataclass
class Candidate:
    """One answer query and what running it said; a judge makes it, the step numbers and links it."""

    sql: str
    source: str  # direct | repair | sample N | rewrite N | rows rewrite N
    ok: bool = False  # it ran and left a result (the Solver's prediction.csv, the analyst's stored result)
    blocking: list[str] = field(default_factory=list)
    """Why it is no answer, a line each: the check lines that send it back, the error of a query that
    failed, the diagnosis of one that found nothing; empty when it answers."""
    found_nothing: bool = False  # its result has nothing in it (no rows, NULLs, a count of 0 over no rows)
    signature: str | None = None  # its answer as the scorer sees it, for agreement (None: agrees with none)
    result: ResultShape | None = None  # its result's columns and rows, when it ran
    ref: str | None = None  # where its result stays, as the model names it (the analyst's `@N`)
    rule: str | None = None  # the rule that wrote it (`datasolver.data.rules`), when the program did
    rewritten: str | None = None  # what that rule rewrote, in words
    rewrite_of: Candidate | None = field(default=None, repr=False, compare=False)  # the candidate it rewrote
    repeats: str | None = None  # the source of the earlier candidate whose query it wrote again (not run again)

    @property
    def passes(self) -> bool:
        return self.ok and not self.blocking

    def why(self) -> str:
        """Why it is no answer, in full (the repair turn's)."""
        return "; ".join(self.blocking) or ("answered" if self.ok else "it did not run")

    def lesson(self) -> str:
        """One line for the tool loop's opening: where its result stays, the query, why it was no answer."""
        where = f"{self.ref} " if self.ref is not None else ""
        return (f"{where}`{clip(' '.join(self.sql.split()), LESSON_SQL_CHARS)}` → "
                f"{clip(' '.join(self.why().split()), LESSON_WHY_CHARS)}")

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "sql": clip(self.sql, SHOWN_SQL_CHARS), "ok": self.ok, "passes": self.passes,
                "blocking": [clip(line, SHOWN_LINE_CHARS) for line in self.blocking], "signature": self.signature,
                "result": self.ref, "rows": self.result.rows if self.result is not None else None,
                **({"rule": self.rule, "rewritten": self.rewritten} if self.rule is not None else {}),
                **({"repeated": self.repeats} if self.repeats is not None else {})}


@dataclass
class DirectOutcome:
    """What the direct step came to: its candidates, the chosen one (None: the tool loop takes over) and why."""

    candidates: list[Candidate] = field(default_factory=list)
    chosen: Candidate | None = None
    how: str = ""  # why it was chosen, or why none was
    requests: int = 0

    def lessons(self) -> list[str]:
        """What the tool loop is told was tried and why it gave no answer (each query once: a query written
        again is its first writing's line)."""
        return list(dict.fromkeys(c.lesson() for c in self.candidates if not c.passes and c.repeats is None))


class Judge(Protocol):
    """How one agent runs a query as a candidate and which rewrites the program offers for it."""

    async def run(self, sql: str, source: str) -> Candidate:
        """The query run and judged (ok, blocking, found_nothing, signature, result, ref)."""
        ...

    async def rewrites(self, failed: Candidate) -> list[Rewrite]:
        """The program's rewrites of a candidate that failed or found nothing, in the order to try."""
        ...

    async def row_rewrites(self, passed: Candidate) -> list[Rewrite]:
        """The program's on-rows rewrites of a passing candidate with rows (`rules.apply_on_rows`)."""
        ...

    async def adopt(self, chosen: Candidate) -> bool:
        """Make the chosen candidate's result the answer; False when it no longer passes."""
        ...


@dataclass(frozen=True)
class DirectTerms:
    """What differs between the agents' direct steps, apart from the judge."""

    render: Callable[..., str]  # the agent's prompt files (`PromptFiles.render`)
    repair_prompt: str  # the repair turn's prompt there, with `{{problem}}` and `{{again}}`
    reply_tokens: int  # `max_tokens` of each reply: one query is short
    candidate_event: str  # the trace event of each candidate
    step_event: str  # the trace event of a request with no candidate, and of the outcome
    repairs: int = 1  # repair turns after the first query
    samples: int = 0  # samples of the first request once the repairs are spent
    temperature: float | None = None  # of the first request and the repairs (None: the client's own)
    warmer: float = 0.7  # of the samples, and (at least) of a repair after a query written again
    tools: list[dict[str, Any]] | None = None  # sent with tool calls off (the Solver's, for the loop's prefix)
    chat_options: Mapping[str, Any] = field(default_factory=dict)
    max_requests: int | None = None  # requests the step may send (None: no bound but the others)
    seconds_left: Callable[[], float | None] = lambda: None  # to the deadline (None: no deadline)
    reserve_seconds: float = 0.0  # kept for what comes after the step (the loop, a fallback)


@dataclass
class DirectStep:
    """One direct step: the messages of the first request, the model, the judge, the terms."""

    messages: list[dict[str, Any]]
    client: LLMClient
    judge: Judge
    terms: DirectTerms
    outcome: DirectOutcome = field(default_factory=DirectOutcome)
    seconds_per_request: float | None = None  # measured on the first reply: what one more query costs
    stopped: str | None = None  # why the last request gave no candidate

    async def run(self) -> DirectOutcome:
        """The first query, the program's rewrites and the repair turns, the samples, the choice."""
        conversation = list(self.messages)
        tried = await self._turn(conversation, FIRST, self.terms.temperature)
        for _ in range(self.terms.repairs):
            if tried is None or tried.passes or not self._room():
                break
            conversation += [{"role": "assistant", "content": f"```sql\n{tried.sql}\n```"},
                             user_message(self.terms.render(
                                 self.terms.repair_prompt, problem=clip(tried.why(), PROBLEM_CHARS),
                                 again=f"\n{REPEATED}" if tried.repeats else "").strip())]
            warmer = max(self.terms.warmer, self.terms.temperature or 0.0)
            tried = await self._turn(conversation, REPAIR, warmer if tried.repeats else self.terms.temperature)
        if tried is not None and tried.passes:
            return await self._choose(tried, self._passed(tried))
        # A first reply with no query at all: the model wants to explore; the loop serves it better.
        for _ in range(self.terms.samples if self.outcome.candidates else 0):
            if not self._room():
                break
            await self._turn(self.messages, self._numbered(SAMPLE), self.terms.warmer)
            if self._agreeing() >= AGREEING:
                break
        chosen, how = choose(self.outcome.candidates)
        if chosen is not None:
            return await self._choose(chosen, how)
        return self._none(how if self.outcome.candidates or self.stopped is None else self.stopped)

    async def _turn(self, messages: list[dict[str, Any]], source: str, temperature: float | None) -> Candidate | None:
        """One request's candidate; when it failed or found nothing, the first of the program's rewrites
        that passes in its place. None when the reply had no query."""
        tried = await self._ask(messages, source, temperature)
        if tried is None or tried.passes or tried.repeats is not None or (tried.ok and not tried.found_nothing):
            return tried
        return await self._rewritten(tried) or tried

    async def _ask(self, messages: list[dict[str, Any]], source: str, temperature: float | None) -> Candidate | None:
        """One request, tools off; its query (if any) run as a candidate. None when the reply had no query."""
        options = {**self.terms.chat_options, "max_tokens": self.terms.reply_tokens}
        if temperature is not None:
            options["temperature"] = temperature
        left = self.terms.seconds_left()
        if left is not None and left <= 0:
            self.stopped = f"no time was left for the {source} request"
            return None
        try:
            reply = await self.client.chat(messages, self.terms.tools, **options)
        except LLMError as exc:
            self.stopped = f"the {source} request failed: {type(exc).__name__}: {exc}"
            self._event(self.terms.step_event, source=source, error=self.stopped)
            return None
        self.outcome.requests += 1
        if self.seconds_per_request is None and reply.usage.completion_tokens:
            generation = max(reply.latency_s - (reply.prefill_s or 0.0), MIN_GENERATION_S)
            self.seconds_per_request = generation + RUN_S
        sql = reply_query(reply.content, reply.tool_calls)
        if sql is None:
            self.stopped = f"the {source} reply wrote no query"
            self._event(self.terms.step_event, source=source, query=None, reply=clip(reply.content, SHOWN_REPLY_CHARS))
            return None
        earlier = next((c for c in self.outcome.candidates if same_query(c.sql, sql)), None)
        if earlier is not None:  # the same query again: its verdict stands
            return self._add(replace(earlier, source=source, repeats=earlier.source, rule=None, rewritten=None,
                                     rewrite_of=None))
        return self._add(await self.judge.run(sql, source))

    async def _rewritten(self, failed: Candidate, depth: int = 0) -> Candidate | None:
        """The program's rewrites of a query that failed or found nothing, each run as a candidate (no
        request); the first that passes, or None. A rewrite of a failed query that runs and finds nothing
        has its own rewrites tried, up to `REWRITE_DEPTH`."""
        for rewrite in await self.judge.rewrites(failed):
            if self._seen(rewrite.sql):
                continue
            candidate = self._add(await self._run_rewrite(rewrite, REWRITE, failed))
            if candidate.passes:
                return candidate
            if depth < REWRITE_DEPTH and not failed.ok and candidate.ok and candidate.found_nothing:
                deeper = await self._rewritten(candidate, depth + 1)
                if deeper is not None:
                    return deeper
        return None

    async def _choose(self, candidate: Candidate, how: str) -> DirectOutcome:
        """Make `candidate` the answer; an on-rows rewrite of it that passes is chosen in its place."""
        better = await self._rows_rewritten(candidate)
        if better is not None:
            candidate, how = better
        if not await self.judge.adopt(candidate):  # it passed a moment ago: say so, and let the loop take over
            return self._none(f"{candidate.source} no longer passes when run again")
        self.outcome.chosen, self.outcome.how = candidate, how
        self._event(self.terms.step_event, chosen=candidate.source, how=how, signature=candidate.signature,
                    requests=self.outcome.requests)
        return self.outcome

    async def _rows_rewritten(self, passed: Candidate) -> tuple[Candidate, str] | None:
        """The first of the program's on-rows rewrites of `passed` that passes, and why; None when none
        does (or `passed` is such a rewrite itself, or has no rows)."""
        if passed.source.startswith(ROWS_REWRITE) or passed.result is None or not passed.result.rows:
            return None
        for rewrite in await self.judge.row_rewrites(passed):
            if self._seen(rewrite.sql):
                continue
            candidate = self._add(await self._run_rewrite(rewrite, ROWS_REWRITE, passed))
            if candidate.passes:
                return candidate, (f"the program's rewrite of the {passed.source} query passed the answer checks "
                                   f"({rewrite.reason})")
        return None

    async def _run_rewrite(self, rewrite: Rewrite, kind: str, of: Candidate) -> Candidate:
        ran = await self.judge.run(rewrite.sql, self._numbered(kind))
        return replace(ran, rule=rewrite.rule, rewritten=rewrite.reason, rewrite_of=of)

    def _none(self, how: str) -> DirectOutcome:
        self.outcome.how = how
        self._event(self.terms.step_event, chosen=None, how=how, requests=self.outcome.requests)
        return self.outcome

    def _add(self, candidate: Candidate) -> Candidate:
        self.outcome.candidates.append(candidate)
        self._event(self.terms.candidate_event, **candidate.as_dict())
        return candidate

    def _seen(self, sql: str) -> bool:
        return any(same_query(c.sql, sql) for c in self.outcome.candidates)

    def _numbered(self, kind: str) -> str:
        """`kind N`: the Nth candidate of its kind."""
        return f"{kind} {1 + sum(c.source.startswith(f'{kind} ') for c in self.outcome.candidates)}"

    @staticmethod
    def _passed(candidate: Candidate) -> str:
        if candidate.rewritten is not None:
            return f"the program's rewrite passed the answer checks ({candidate.rewritten})"
        return f"the {candidate.source} query passed the answer checks"

    def _room(self) -> bool:
        """Whether one more request fits: the request budget, and the time left (keeping the reserve)."""
        if self.terms.max_requests is not None and self.outcome.requests >= self.terms.max_requests:
            return False
        left = self.terms.seconds_left()
        return left is None or left > (self.seconds_per_request or FIRST_GUESS_S) + self.terms.reserve_seconds

    def _agreeing(self) -> int:
        counts = Counter(c.signature for c in self.outcome.candidates if c.passes and c.signature is not None)
        return max(counts.values(), default=0)

    def _event(self, name: str, **fields: Any) -> None:
        self.client.trace.event(name, **fields)


def choose(candidates: list[Candidate]) -> tuple[Candidate | None, str]:
    """The candidate execution chooses: among those that pass, the answer most agree on (a tie: the
    earliest; a candidate with no signature agrees with none); None when none passes."""
    passing = [c for c in candidates if c.passes]
    if not passing:
        return None, f"none of {len(candidates)} candidate queries passed the answer checks"
    counts = Counter(c.signature for c in passing if c.signature is not None)
    agreeing = [counts[c.signature] if c.signature is not None else 1 for c in passing]
    best = max(agreeing)
    chosen = passing[agreeing.index(best)]
    return chosen, f"{best} of {len(candidates)} candidate queries agree (and pass the answer checks)"


__all__ = ["Candidate", "DirectOutcome", "DirectTerms", "DirectStep", "Judge", "choose"]
