"""solve_task: up to N attempts of the tool-calling loop on a prepared scratch dir, then a
fallback run of the last edited solver.py. An accepted prediction is published at once.

An attempt is accepted iff it ended without an exception and `workdir/prediction.csv` exists.
Every attempt starts from the pristine scaffold with no prediction. Attempts differ: from the
second on the temperature rises (``Limits.temperature_for``) and the opening message says in one
line how the previous attempt ended, so no attempt re-sends an earlier request byte for byte.
A spent token budget, or a task prompt too big for the server's window, ends the task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from collections.abc import Awaitable, Mapping

from datasolver.agent.assemble import build_messages, build_system_prompt
from datasolver.agent.brief import TaskBrief, gather_brief
from datasolver.agent.conversation import Conversation
from datasolver.agent.direct import SolverJudge, direct_messages, solver_terms
from datasolver.agent.fit import first_prompt_tokens, fit_brief
from datasolver.agent.learnt import Learnt
from datasolver.agent.limits import NO_DEADLINE, Deadline, Limits
from datasolver.eval.confidence import AnswerEvidence, confidence
from datasolver.agent.loop import (
    ANSWERED,
    CONTEXT_OVERFLOW,
    DEADLINE,
    STALLED,
    TOKEN_BUDGET,
    AttemptRun,
    reply_kind,
    run_attempt,
)
from datasolver.agent.prompts import render_prompt
from datasolver.agent.relevance import vote_table_relevance
from datasolver.agent.state import OPENING_SHARE, AttemptResult, Held, SolveState
from datasolver.agent.tokens import estimate_tokens, estimate_tools_tokens
from datasolver.agent.video import pick_frames
from datasolver.agent.video_judge import judge_video
from datasolver.clip import clip
from datasolver.data import Catalog, ScratchLayout, Task
from datasolver.data.rules.context import RuleContext
from datasolver.direct_step import DirectOutcome, DirectStep
from datasolver.llm import LLMClient, TraceWriter, user_message
from datasolver.llm.window import reply_tokens
from datasolver.sandbox import SandboxLimits, UnsafeFile, safe_files
from datasolver.solver import (
    SolverToolbox,
    TaskStatus,
    publish_prediction,
    render_run,
    restore_scaffold,
    run_fallback,
)
from datasolver.solver.scaffold import with_query
from datasolver.solver.tools import SOLVER_HOOKS, RewriteOffers, last_query, sent_query, written_query_calls
from datasolver.toolkit import ToolRunner

SOLVED: TaskStatus = "solved"
FALLBACK: TaskStatus = "fallback"
FAILED: TaskStatus = "failed"

EVENT_ATTEMPT_START = "attempt_start"
EVENT_ATTEMPT_END = "attempt_end"
EVENT_FALLBACK = "fallback"
EVENT_PUBLISHED = "prediction_published"
EVENT_SOLVE_END = "solve_end"
EVENT_PROMPT_FITTED = "prompt_fitted"
EVENT_HELD = "answer_held"  # an answer with failed checks, not published while time remains
EVENT_HELD_PUBLISHED = "held_answer_published"  # at the end: the held answer with the fewest failed checks
EVENT_STALL_GOES_ON = "stall_goes_on"  # a stalled attempt with nothing to publish: the next attempt starts
EVENT_CONFIDENCE = "confidence"  # the published answer's label and what it was read from
EVENT_WINDOW = "context_window"  # what is known of the server's window as the task starts
RELEVANCE_VOTES = 3  # votes on table relevance, asked only when the first prompt is over its budget
QUERY_SHARE_OF_TOOL_TIMEOUT = 0.9
EVENT_VIDEO_JUDGE = "video_judge"
# With a known context window the whole opening may take OPENING_SHARE (`agent/state.py`) of the
# compaction threshold; the rest is room for tool results and the model's turns.
OVERFLOW_SHRINK = 0.7  # after a context overflow with the window already known, fit to 70% of the share
MIN_PROMPT_BUDGET = 200
KNOWLEDGE_MIN_CHARS = 1_000  # a window too small for the folded prompt still keeps this much knowledge.md
KNOWLEDGE_CUT_NOTE = "knowledge.md cut here to fit the model's context window"
SMALL_WINDOW = 16_384  # below it the compaction note shows only solver.py's query area
# A server whose prefill speed is known (llama.cpp says it in every reply) gets a first prompt it can
# read in at most this share of the time left to the task: on 2 CPU cores a 1.5B model reads 20-40
# tokens a second, so a 4,500-token opening took 78-250 s of a 600 s task.
PREFILL_SHARE = 0.15


@dataclass
class SolveOutcome:
    """The result of one task's solve, the agent's or, when the agent could not run or answer, the
    pipeline's (its fallback run; why neither ran): the one outcome the pipeline's record is built
    from. ``prediction`` is `<output>/<task_id>/prediction.csv` when written."""

    task_id: str
    status: TaskStatus  # solved | fallback | failed (never skipped: that is the pipeline's resume)
    attempts: int = 0  # attempts started
    requests: int = 0  # model requests sent, over all attempts
    usage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    prediction: Path | None = None
    reason: str | None = None  # why it failed, or why the fallback was needed
    attempt_results: list[AttemptResult] = field(default_factory=list)
    error: str | None = None
    """`ExceptionType: message` when the solve raised or overstayed (set by the caller that stopped it)."""
    vote: dict[str, Any] | None = None
    """The vote's record when the answer was chosen among several solves (the pipeline's `--votes`)."""
    confidence: str | None = None
    """high | medium | low for a published answer (`eval.confidence`), None without one."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary of the agent's part (its `solve_end` trace event)."""
        return {
            "task_id": self.task_id, "status": self.status, "attempts": self.attempts,
            "requests": self.requests, "usage": dict(self.usage), "seconds": round(self.seconds, 3),
            "prediction": str(self.prediction) if self.prediction else None, "reason": self.reason,
            "attempt_results": [a.as_dict() for a in self.attempt_results], "confidence": self.confidence,
        }


@dataclass(frozen=True)
class TaskRun:
    """What one solve of a task reads, built once by the caller (the pipeline's `run_task`) and never
    changed: what changes lives on the session (attempts, the held answers, the fitted opening), as
    pydantic-ai keeps an agent's dependencies apart from its state. The layout is the one `prepare`
    made and checked; the solve's trace is its client's."""

    task: Task
    layout: ScratchLayout
    client: LLMClient
    output_dir: Path  # the accepted prediction is published to <output_dir>/<task_id>/
    limits: Limits = Limits()
    chat_options: Mapping[str, Any] = field(default_factory=dict)  # extra keywords for every `client.chat` call
    deadline: Deadline = NO_DEADLINE  # when the solve must end: set once, by the pipeline

    @property
    def trace(self) -> TraceWriter:
        """The solve's trace: its client's (`NULL_TRACE` when it keeps none)."""
        return self.client.trace


class TaskSolver(Protocol):
    """How the pipeline calls a solver: `solve_task`, or a stand-in with its shape (tests, benchmarks)."""

    def __call__(self, run: TaskRun, /) -> Awaitable[SolveOutcome]: ...


async def solve_task(run: TaskRun) -> SolveOutcome:
    """Solve one prepared task. Raises only for programmer errors.

    The brief and the answer checks take the run's task; the solve's trace is the client's.
    ``run.chat_options`` are extra keywords for every ``client.chat`` call (e.g. ``enable_thinking``).
    ``run.limits.answer_checks=False`` turns run_solver's answer checks off (only to measure what they bring).
    Blocking work (profiling, tools, solver runs) runs in threads, so many tasks can share a loop.
    """
    started = time.monotonic()
    client, layout, limits, trace = run.client, run.layout, run.limits, run.trace
    await client.learn_context_window()  # asks the server once per endpoint (shared facts)
    trace.event(EVENT_WINDOW, **client.facts.as_dict())
    # A query stops a little before the tool call's own timeout, so the model gets the catalog's
    # precise message rather than a bare "did not finish".
    catalog = await asyncio.to_thread(Catalog.open, layout.root, cache_dir=layout.own_cache(),
                                      timeout_s=limits.tool_timeout_s * QUERY_SHARE_OF_TOOL_TIMEOUT)
    try:
        brief = await asyncio.to_thread(_gather_brief_in_turn, run, catalog)
        evidence_hints = await _video_verdict(brief, run)
        with SolverToolbox(layout, catalog=catalog, answer_checks=limits.answer_checks, task=run.task) as toolbox:
            session = _Session(run, brief, toolbox, evidence_hints)
            await session.fit()
            outcome = await session.solve()
    finally:
        await asyncio.to_thread(catalog.close)
    outcome.seconds = time.monotonic() - started
    trace.event(EVENT_SOLVE_END, **{k: v for k, v in outcome.as_dict().items() if k != "attempt_results"})
    return outcome


# Building a brief is CPU work (loading and profiling every table). More at once than there are
# CPUs only slows each of them down, and they all finish together: the tasks then stay in step and
# their later CPU bursts (explore queries, solver.py runs) collide as well. In turns, they start
# talking to the model one after the other. A process-wide bound: the CPUs are the process's.
BRIEF_TURNS = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))


def _gather_brief_in_turn(run: TaskRun, catalog: Catalog) -> TaskBrief:
    with BRIEF_TURNS:
        return gather_brief(run.layout, catalog, run.limits, task=run.task)


async def _video_verdict(brief: TaskBrief, run: TaskRun) -> str:
    """The evidence hints: the advisory video answer judge's verdict, when the task has a video ("": none)."""
    client, limits, trace = run.client, run.limits, run.trace
    if not brief.video.strip() or limits.video_judges == 0 or run.deadline.expired():
        return ""
    images = pick_frames(brief.video_frames, limits.vision_images) if limits.vision else ()
    left = run.deadline.seconds_left()
    try:
        verdict = await asyncio.wait_for(
            judge_video(client, brief.question, brief.video, calls=limits.video_judges, images=images,
                        max_side=limits.vision_max_side),
            timeout=None if left is None else max(left / 4, 1.0))
    except asyncio.TimeoutError:
        trace.event(EVENT_VIDEO_JUDGE, verdict=None, error="timed out")
        return ""
    hint = verdict.hint(brief.video)
    trace.event(EVENT_VIDEO_JUDGE, verdict=verdict.shows_answer, failed=verdict.failed,
                votes=[v.shows_answer for v in verdict.votes], confidence=verdict.confidence)
    return hint.strip()


class _Session:
    """The attempts of one task: what they read (the run, the brief as gathered, the tools, the
    evidence hints, the attempts' `AttemptRun`) and the one `SolveState` they change."""

    def __init__(self, task_run: TaskRun, brief: TaskBrief, toolbox: SolverToolbox, evidence_hints: str) -> None:
        self.task_run = task_run
        client, limits, layout = task_run.client, task_run.limits, task_run.layout
        self.toolbox = toolbox
        self.usage_at_start = client.usage.as_dict()
        self.full_brief = brief
        self.evidence_hints = evidence_hints
        self.state = SolveState(brief, build_messages(brief, limits, evidence_hints, client.context_window),
                                learnt=Learnt(tuple(brief.digest.names()) if brief.digest is not None else ()))
        runner = ToolRunner(toolbox, task_run.trace, hooks=SOLVER_HOOKS,
                            timeout_s=limits.tool_timeout_s, result_chars=limits.tool_result_chars,
                            seconds_left=task_run.deadline.seconds_left)
        self.run = AttemptRun(client, runner, toolbox.schemas(), limits, self._solver_view, client.usage,
                              runner.trace, dict(task_run.chat_options), started=task_run.deadline.clock(),
                              has_prediction=lambda: safe_files.is_regular(layout.prediction),
                              written_query=written_query_calls, sent_query=sent_query, deadline=task_run.deadline,
                              offer=RewriteOffers(layout, self._rule_context), state=self.state)

    @property
    def brief(self) -> TaskBrief:
        """The brief the opening was built from (fitted to its budget)."""
        return self.state.brief

    def _rule_context(self) -> RuleContext:
        """What the task's rewrite rules read (the catalog, the question's links and shape): one context for
        the direct step's judge and the loop's offers (`solver.tools.RewriteOffers`)."""
        return RuleContext(self.toolbox.catalog, self.brief.links, shape=self.task_run.task.shape)

    async def fit(self) -> None:
        """Fit the first prompt to its budget (and to the server's window, when known)."""
        window = self.task_run.client.context_window
        limits = self.task_run.limits
        fixed = estimate_tokens(build_system_prompt(limits, window)) + estimate_tools_tokens(self.run.tools)
        budget = prompt_budget_for(limits, window, reply_tokens(self.task_run.client.settings.max_tokens, window),
                                   fixed, share=self.state.opening_share, scale=self.state.scale)
        slow = prefill_budget(self.task_run.client.facts.prefill_rate, self.task_run.deadline.seconds_left(), self.state.scale)
        if slow is not None and slow < budget:
            budget = slow
        else:
            slow = None
        before = first_prompt_tokens(self.full_brief, self.evidence_hints)
        self.state.fitted_window = window
        if before <= budget:
            self.state.brief = self.full_brief
        else:
            brief = self.full_brief
            if slow is not None:  # a slow server sheds the knowledge.md lint first (leads, not facts)
                brief = dataclasses.replace(brief, lint="")
            if self.state.votes is None and slow is None:  # on a slow server the votes cost more than they save
                digest = self.full_brief.digest
                self.state.votes = await vote_table_relevance(self.task_run.client, self.full_brief.question, digest,
                                                        RELEVANCE_VOTES) if digest else {}
            self.state.brief = await asyncio.to_thread(fit_brief, brief, budget,
                                                 evidence_hints=self.evidence_hints, relevance=self.state.votes)
            over = first_prompt_tokens(self.brief, self.evidence_hints) - budget
            if over > 0 and (window is not None or slow is not None) and self.brief.knowledge:  # cut knowledge.md too
                keep = max(KNOWLEDGE_MIN_CHARS, len(self.brief.knowledge) - 4 * over)
                if keep < len(self.brief.knowledge):
                    cut = self.brief.knowledge[:keep].rstrip() + f"\n… ({KNOWLEDGE_CUT_NOTE})"
                    self.state.brief = dataclasses.replace(self.brief, knowledge=cut)
            self._event(EVENT_PROMPT_FITTED, budget=budget, context_window=window, tokens_before=before,
                        tokens_after=first_prompt_tokens(self.brief, self.evidence_hints),
                        folded=list(self.brief.folded), votes=self.state.votes,
                        prefill_rate=self.task_run.client.facts.prefill_rate if slow is not None else None)
        self.state.opening = build_messages(self.brief, self.task_run.limits, self.evidence_hints, window)

    async def _refit(self) -> bool:
        """After a context overflow: fit the first prompt smaller (a window learnt from the 400, or
        less room for it); False when it cannot get any smaller."""
        if self.task_run.client.context_window is None:
            return False
        if self.task_run.client.context_window == self.state.fitted_window:
            self.state.opening_share *= OVERFLOW_SHRINK
        before = self.state.opening
        await self.fit()
        return self.state.opening != before

    async def solve(self) -> SolveOutcome:
        reason = None
        if self.task_run.limits.direct_answer:
            direct = await self._direct()
            if direct.chosen is not None and safe_files.is_regular(self.task_run.layout.prediction):
                path = await self._publish(0)
                chosen = direct.chosen
                agreeing = sum(c.passes and c.signature == chosen.signature for c in direct.candidates)
                self._evidence(AnswerEvidence(direct.candidates.index(chosen), True, agreeing=max(agreeing, 1)))
                return self._outcome(SOLVED, path, None)
            self.state.learnt.rejected += direct.lessons()
            self.state.held += [Held(f"the direct path ({c.source})", with_query(self._pristine(), c.sql), c.blocking)
                          for c in direct.candidates if c.ok and c.blocking]
            await asyncio.to_thread(self._remember_edits)
        for number in range(1, self.task_run.limits.max_attempts + 1):
            if self.task_run.deadline.expired():
                reason = f"deadline passed before attempt {number}"
                break
            result = await self._attempt(number)
            if result.ended == STALLED:  # it stopped improving: the best candidate by the checks, now
                reason = (f"attempt {number} stopped improving ({result.stalled_rounds} rounds without a new query "
                          "with rows or a newly passed check)")
                if await asyncio.to_thread(self._stalled_answer, result, number):
                    path = await self._publish(number)
                    self._evidence(self._loop_evidence(result, number))
                    return self._outcome(SOLVED, path, reason)
                if self.state.held or self.state.last_rows_query is not None:
                    break  # something to publish: the fallback weighs it now, not at the deadline
                # Nothing at all to publish (no answer held, no query with rows): ending here would end
                # the task with no answer; the next attempt starts afresh with what this one learnt.
                self._event(EVENT_STALL_GOES_ON, attempt=number)
                await asyncio.to_thread(self._remember_edits)
                continue
            if result.error is None and safe_files.is_regular(self.task_run.layout.prediction):
                if self._hold(result, number):
                    reason = f"attempt {number}'s answer failed answer checks ({', '.join(result.checks)})"
                    continue
                path = await self._publish(number)
                self._evidence(self._loop_evidence(result, number))
                return self._outcome(SOLVED, path, None)
            reason = _why_rejected(result)
            if result.ended == DEADLINE:
                reason = f"deadline reached in attempt {number}"
                break
            if result.ended == CONTEXT_OVERFLOW and await self._refit():
                pass  # a smaller first prompt may fit: the next attempt tries it
            elif result.ended in (TOKEN_BUDGET, CONTEXT_OVERFLOW):
                reason = f"attempt {number} ended ({result.ended}): {result.error}"
                break
            await asyncio.to_thread(self._remember_edits)
        return await self._fallback(reason or "no attempt was made")

    def _loop_evidence(self, result: AttemptResult, number: int) -> AnswerEvidence:
        """A loop answer: a repair round per attempt, one more when the direct path failed before it."""
        return AnswerEvidence(number + self.state.direct_ran, not result.check_lines)

    def _evidence(self, evidence: AnswerEvidence) -> None:
        self.state.label = confidence(evidence)
        self._event(EVENT_CONFIDENCE, label=self.state.label, repair_rounds=evidence.repair_rounds,
                    checks_pass=evidence.checks_pass, fallback=evidence.fallback, agreeing=evidence.agreeing)

    def _stalled_answer(self, result: AttemptResult, number: int) -> bool:
        """A stalled attempt's prediction.csv: True when it passed its checks (published as it is); one
        with failed checks joins the held answers, so the fallback weighs it against the others."""
        if not safe_files.is_regular(self.task_run.layout.prediction):
            return False
        if not result.check_lines:
            return True
        code = _read(self.task_run.layout.solver_py)
        if code is not None:
            self.state.held.append(Held(f"attempt {number}", code, list(result.check_lines)))
        return False

    def _hold(self, result: AttemptResult, number: int) -> bool:
        """Whether an attempt's answer, whose checks still fail, is held back: attempts and time remain."""
        if not (self.task_run.limits.hold_flagged and result.check_lines):
            return False
        left = self.task_run.deadline.seconds_left()
        limits = self.task_run.limits
        if number >= limits.max_attempts or (left is not None and left < limits.hold_seconds):
            return False
        code = _read(self.task_run.layout.solver_py)
        if code is None:
            return False
        self.state.held.append(Held(f"attempt {number}", code, list(result.check_lines)))
        query = last_query(self.task_run.layout)
        if query:
            self.state.learnt.rejected.append(f"`{clip(' '.join(query.split()), 300)}` → "
                                            + clip("; ".join(result.check_lines), 300))
        self._event(EVENT_HELD, attempt=number, checks=list(result.checks))
        return True

    async def _direct(self) -> DirectOutcome:
        """The cheapest path first (`datasolver.direct_step`, the Solver's judge `agent.direct`): one direct
        answer query, then candidates."""
        await asyncio.to_thread(restore_scaffold, self.task_run.layout)
        self._event(EVENT_ATTEMPT_START, attempt=0, temperature=self.task_run.client.settings.temperature, direct=True)
        before = self.task_run.client.usage.requests
        judge = SolverJudge(self.run.runner, self.task_run.layout, self._rule_context())
        terms = solver_terms(self.task_run.limits, self.run.tools, dict(self.task_run.chat_options),
                               self.task_run.deadline.seconds_left)
        outcome = await DirectStep(direct_messages(self.state.opening), self.task_run.client, judge, terms).run()
        self.state.direct_ran = 1
        self.state.direct_requests = self.task_run.client.usage.requests - before
        self._event(EVENT_ATTEMPT_END, attempt=0, direct=True, requests=outcome.requests,
                    candidates=len(outcome.candidates), chosen=outcome.chosen.source if outcome.chosen else None,
                    how=outcome.how, prediction=safe_files.is_regular(self.task_run.layout.prediction))
        return outcome

    async def _attempt(self, number: int) -> AttemptResult:
        await asyncio.to_thread(restore_scaffold, self.task_run.layout)
        temperature = self.task_run.limits.temperature_for(number, self.task_run.client.settings.temperature)
        self._event(EVENT_ATTEMPT_START, attempt=number, temperature=temperature)
        conv = Conversation.start(self._opening(number), self.brief.question)
        result = await run_attempt(number, conv, self.run)
        self.state.scale = conv.scale
        self.state.results.append(result)
        self._event(EVENT_ATTEMPT_END, prediction=safe_files.is_regular(self.task_run.layout.prediction),
                    **result.as_dict())
        return result

    def _opening(self, number: int) -> list[dict[str, Any]]:
        """The opening messages; from attempt 2 the task message ends with how the last one went
        (attempt 1 after a direct path that found no answer: with what it tried)."""
        if number == 1 or not self.state.results:
            learnt = self.state.learnt.lines()
            if not learnt:
                return list(self.state.opening)
            last = self.state.opening[-1]
            return [*self.state.opening[:-1], user_message(f"{last['content'].rstrip()}\n\n"
                                                     + render_prompt("learnt", lines=learnt).strip())]
        line = render_prompt("previous_attempt", attempt=number, how=_how_it_ended(self.state.results[-1], _submitter(self.toolbox))).strip()
        learnt = self.state.learnt.lines()
        if learnt:  # after the unchanged first message: a server's prompt cache still serves it
            line += "\n" + render_prompt("learnt", lines=learnt).strip()
        last = self.state.opening[-1]
        return [*self.state.opening[:-1], user_message(f"{last['content'].rstrip()}\n\n{line}")]

    async def _fallback(self, reason: str) -> SolveOutcome:
        """Run the fallback scripts in turn until one publishes (`_fallback_scripts`); each run is
        `datasolver.solver.run_fallback`. All of them share one tool timeout (a later script gets what
        the earlier ones left), so the fallback costs what one run did before and the pipeline's hard
        stop (two tool timeouts past the deadline) is not what ends it."""
        scripts = await asyncio.to_thread(self._fallback_scripts)
        if not scripts:
            self._event(EVENT_FALLBACK, ran=False, reason=reason)
            return self._outcome(FAILED, None, f"{reason}; fallback skipped: solver.py was never edited "
                                               "and no explore query returned rows")
        ends, notes = time.monotonic() + float(self.task_run.limits.tool_timeout_s), []
        for script, source in scripts:
            left = ends - time.monotonic()
            if notes and left < 1.0:
                break
            sandbox = SandboxLimits(timeout_s=max(left, 1.0))
            done = await asyncio.to_thread(run_fallback, self.task_run.layout, self.task_run.output_dir, sandbox,
                                           script=script, source=source)
            self._event(EVENT_FALLBACK, ran=True, source=source, status=done.run.status,
                        report=render_run(done.run, self_check=False, show_rows=0)[:2000])
            notes.append(done.note)
            if done.prediction is not None:
                self._event(EVENT_PUBLISHED, attempt=None, path=str(done.prediction))
                self._evidence(AnswerEvidence(len(self.state.results) + self.state.direct_ran, False, fallback=True))
                return self._outcome(FALLBACK, done.prediction, "; ".join([reason, *notes]))
        return self._outcome(FAILED, None, "; ".join([reason, *notes]))

    def _fallback_scripts(self) -> list[tuple[str, str]]:
        """(script, where it came from), in the order they are tried: the held answer with the fewest
        failed checks, the last edited solver.py (the current one if edited, else an earlier
        attempt's), the scaffold answering with the last explore query that returned rows."""
        self._remember_edits()
        scripts: list[tuple[str, str]] = []
        if self.state.held:  # answers that ran OK but failed checks: the one with the fewest failed checks
            best = min(self.state.held, key=lambda h: len(h.blocking))
            self._event(EVENT_HELD_PUBLISHED, source=best.source, checks=best.blocking)
            scripts.append((best.code, f"the answer of {best.source} (held back for: "
                                       f"{'; '.join(best.blocking)[:300]})"))
        if self.state.last_edited is not None:
            scripts.append((self.state.last_edited, "the last edited solver.py"))
        query, pristine = self.state.last_rows_query, _read(self.task_run.layout.pristine)
        if query is not None and pristine is not None:
            scripts.append((with_query(pristine, query), "the last explore query that returned rows"))
        unique: dict[str, str] = {}  # a script runs once, at its first place
        for script, source in scripts:
            unique.setdefault(script, source)
        return list(unique.items())

    def _pristine(self) -> str:
        return _read(self.task_run.layout.pristine) or ""

    def _remember_edits(self) -> None:
        current = _read(self.task_run.layout.solver_py)
        if current is not None and current != _read(self.task_run.layout.pristine):
            self.state.last_edited = current

    async def _publish(self, attempt: int | None) -> Path:
        path = await asyncio.to_thread(publish_prediction, self.task_run.layout.prediction, self.task_run.output_dir,
                                       self.brief.task_id)
        self._event(EVENT_PUBLISHED, attempt=attempt, path=str(path))
        return path

    async def _solver_view(self) -> str:
        """solver.py as the model reads it, for the compaction note; in a small window only its
        query area (the part the model edits; line numbers and hashes stay valid)."""
        window = self.task_run.client.context_window
        return await asyncio.to_thread(self.toolbox.solver_view, window is not None and window < SMALL_WINDOW)

    def _outcome(self, status: TaskStatus, prediction: Path | None, reason: str | None) -> SolveOutcome:
        return SolveOutcome(
            task_id=self.brief.task_id, status=status, attempts=len(self.state.results),
            requests=self.state.direct_requests + sum(r.requests for r in self.state.results),
            usage=self.task_run.client.usage.since(self.usage_at_start),
            seconds=0.0,
            prediction=prediction, reason=reason, attempt_results=list(self.state.results),
            confidence=self.state.label if prediction is not None else None,
        )

    def _event(self, kind: str, **fields: Any) -> None:
        self.task_run.trace.event(kind, **fields)


def prompt_budget_for(
    limits: Limits, window: int | None, reply: int | None, fixed_tokens: int, *,
    share: float = 0.6, scale: float = 1.0,
) -> int:
    """The first user message's budget: ``limits.prompt_budget``, or less so that with a known
    window the whole opening (with the rules and tool schemas, ``fixed_tokens``) takes at most
    ``share`` of the room and leaves the rest to the conversation. ``scale`` is the server's
    tokens per estimated token (estimates are what folding measures)."""
    if window is None:
        return limits.prompt_budget
    room = int(limits.compaction_threshold(window, reply) * share / max(scale, 0.1)) - fixed_tokens
    return max(MIN_PROMPT_BUDGET, min(limits.prompt_budget, room))


def prefill_budget(rate: float | None, seconds_left: float | None, scale: float = 1.0) -> int | None:
    """Estimated tokens of a first prompt that a server reading ``rate`` prompt tokens a second
    reads in ``PREFILL_SHARE`` of ``seconds_left``; None when either is unknown. (The rules and tool
    schemas are left out: they are the same for every task, so the server's prefix cache keeps them.)"""
    if rate is None or seconds_left is None:
        return None
    return max(MIN_PROMPT_BUDGET, int(rate * seconds_left * PREFILL_SHARE / max(scale, 0.1)))


def _how_it_ended(result: AttemptResult, submitter: str) -> str:
    """One line: how an attempt ended, for the next attempt's opening message (``submitter``: the
    tool whose successful call writes the answer)."""
    calls = f"{result.requests} requests, {result.tool_calls} tool calls"
    if result.error is not None:
        return f"{result.ended} after {calls}: {result.error[:200]}"
    if result.ended == "answered":
        return f"it answered without a successful {submitter} (no prediction.csv) after {calls}"
    return f"{result.ended} after {calls}, without prediction.csv"


def _submitter(toolbox: SolverToolbox) -> str:
    return next(tool.name for tool in toolbox.tools if tool.submits)


def _why_rejected(result: AttemptResult) -> str:
    if result.error is not None:
        return f"attempt {result.number} ended with {result.error}"
    if result.ended == ANSWERED:  # what the model's last reply held instead of a call
        return f"attempt {result.number} ended (answered with {reply_kind(result.final_text)}) without prediction.csv"
    return f"attempt {result.number} ended ({result.ended}) without prediction.csv"


def _read(path: Path) -> str | None:
    try:
        return safe_files.read_text(path)  # solver.py is sandbox-writable: never followed
    except (OSError, UnsafeFile, UnicodeDecodeError):
        return None

