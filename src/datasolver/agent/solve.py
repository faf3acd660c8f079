"""solve_task: up to N attempts of the tool-calling loop on a prepared scratch dir, then a
fallback run of the last edited solver.py. An accepted prediction is published at once.

An attempt is accepted iff it ended without an exception and `workdir/prediction.csv` exists.
Every attempt starts from the pristine scaffold with no prediction.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.agent.assemble import build_messages
from datasolver.agent.brief import TaskBrief, gather_brief
from datasolver.agent.conversation import Conversation
from datasolver.agent.fit import first_prompt_tokens, fit_brief
from datasolver.agent.limits import Limits
from datasolver.agent.loop import DEADLINE, AttemptResult, AttemptRun, run_attempt
from datasolver.agent.relevance import vote_table_relevance
from datasolver.agent.video import pick_frames
from datasolver.agent.video_judge import judge_video
from datasolver.data import Catalog
from datasolver.llm import LLMClient, TraceWriter, Usage
from datasolver.solver import (
    SandboxLimits,
    ScratchLayout,
    SolverToolbox,
    TaskStatus,
    publish_prediction,
    render_run,
    restore_scaffold,
    run_solver_script,
)
from datasolver.solver import safe_files
from datasolver.solver.errors import UnsafeFile
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
RELEVANCE_VOTES = 3  # votes on table relevance, asked only when the first prompt is over its budget
QUERY_SHARE_OF_TOOL_TIMEOUT = 0.9
EVENT_VIDEO_JUDGE = "video_judge"


@dataclass
class SolveOutcome:
    """The result of one task. ``prediction`` is `<output>/<task_id>/prediction.csv` when written."""

    task_id: str
    status: TaskStatus  # solved | fallback | failed (never skipped: that is the pipeline's resume)
    attempts: int  # attempts started
    requests: int  # model requests sent, over all attempts
    usage: dict[str, int]
    seconds: float
    prediction: Path | None
    reason: str | None  # why it failed, or why the fallback was needed
    attempt_results: list[AttemptResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (for the pipeline's progress records)."""
        return {
            "task_id": self.task_id, "status": self.status, "attempts": self.attempts,
            "requests": self.requests, "usage": dict(self.usage), "seconds": round(self.seconds, 3),
            "prediction": str(self.prediction) if self.prediction else None, "reason": self.reason,
            "attempt_results": [a.as_dict() for a in self.attempt_results],
        }


async def solve_task(
    task_scratch_dir: Path,
    client: LLMClient,
    output_dir: Path,
    *,
    limits: Limits = Limits(),
    trace: TraceWriter | None = None,
    evidence_hints: str = "",
    chat_options: dict[str, Any] | None = None,
) -> SolveOutcome:
    """Solve one prepared task. Raises only for programmer errors (e.g. an unprepared scratch dir).

    ``chat_options`` are extra keywords for every ``client.chat`` call (e.g. ``enable_thinking``).
    Blocking work (profiling, tools, solver runs) runs in threads, so many tasks can share a loop.
    """
    started = time.monotonic()
    layout = ScratchLayout.of(task_scratch_dir).require()
    trace = trace if trace is not None else client.trace
    # A query stops a little before the tool call's own timeout, so the model gets the catalog's
    # precise message rather than a bare "did not finish".
    catalog = await asyncio.to_thread(Catalog.open, layout.root, cache_dir=layout.cache,
                                      timeout_s=limits.tool_timeout_s * QUERY_SHARE_OF_TOOL_TIMEOUT)
    try:
        brief = await asyncio.to_thread(gather_brief, layout.root, catalog, limits)
        evidence_hints = await _with_video_verdict(brief, client, limits, trace, evidence_hints)
        brief = await _fit_prompt(brief, client, limits, evidence_hints, trace)
        with SolverToolbox(layout.root, catalog=catalog) as toolbox:
            session = _Session(layout, brief, client, toolbox, catalog, Path(output_dir), limits, trace,
                               evidence_hints, dict(chat_options or {}))
            outcome = await session.solve()
    finally:
        await asyncio.to_thread(catalog.close)
    outcome.seconds = time.monotonic() - started
    if trace is not None:
        trace.event(EVENT_SOLVE_END, **{k: v for k, v in outcome.as_dict().items() if k != "attempt_results"})
    return outcome


async def _with_video_verdict(brief: TaskBrief, client: LLMClient, limits: Limits, trace: TraceWriter | None,
                              evidence_hints: str) -> str:
    """Evidence hints plus the advisory video answer judge's verdict, when the task has a video."""
    if not brief.video.strip() or limits.video_judges == 0 or limits.expired():
        return evidence_hints
    images = pick_frames(brief.video_frames, limits.vision_images) if limits.vision else ()
    left = limits.seconds_left()
    try:
        verdict = await asyncio.wait_for(
            judge_video(client, brief.question, brief.video, calls=limits.video_judges, images=images,
                        max_side=limits.vision_max_side),
            timeout=None if left is None else max(left / 4, 1.0))
    except asyncio.TimeoutError:
        if trace is not None:
            trace.event(EVENT_VIDEO_JUDGE, verdict=None, error="timed out")
        return evidence_hints
    hint = verdict.hint(brief.video)
    if trace is not None:
        trace.event(EVENT_VIDEO_JUDGE, verdict=verdict.shows_answer, failed=verdict.failed,
                    votes=[v.shows_answer for v in verdict.votes], confidence=verdict.confidence)
    return (evidence_hints.rstrip() + "\n\n" + hint).strip() if hint else evidence_hints


class _Session:
    """The attempts of one task and their shared state (brief, tools, usage, last edited solver.py)."""

    def __init__(
        self, layout: ScratchLayout, brief: TaskBrief, client: LLMClient, toolbox: SolverToolbox,
        catalog: Catalog, output_dir: Path, limits: Limits, trace: TraceWriter | None,
        evidence_hints: str, chat_options: dict[str, Any],
    ) -> None:
        self.layout = layout
        self.brief = brief
        self.output_dir = output_dir
        self.limits = limits
        self.trace = trace
        self.toolbox = toolbox
        self.usage = Usage()
        self.opening = build_messages(brief, limits, evidence_hints)
        self.results: list[AttemptResult] = []
        self.last_edited: str | None = None  # solver.py at the end of the latest attempt that changed it
        runner = ToolRunner(toolbox, trace, timeout_s=limits.tool_timeout_s, result_chars=limits.tool_result_chars,
                            interrupt=lambda: _interrupt(catalog))
        self.run = AttemptRun(client, runner, toolbox.schemas(), limits, self._solver_view, self.usage,
                              trace, chat_options)

    async def solve(self) -> SolveOutcome:
        reason = None
        for number in range(1, self.limits.max_attempts + 1):
            if self.limits.expired():
                reason = f"deadline passed before attempt {number}"
                break
            result = await self._attempt(number)
            if result.error is None and safe_files.is_regular(self.layout.prediction):
                path = await self._publish(number)
                return self._outcome(SOLVED, path, None)
            reason = _why_rejected(result)
            if result.ended == DEADLINE:
                reason = f"deadline reached in attempt {number}"
                break
            await asyncio.to_thread(self._remember_edits)
        return await self._fallback(reason or "no attempt was made")

    async def _attempt(self, number: int) -> AttemptResult:
        await asyncio.to_thread(restore_scaffold, self.layout.root)
        self._event(EVENT_ATTEMPT_START, attempt=number)
        conv = Conversation.start(self.opening, self.brief.question)
        result = await run_attempt(number, conv, self.run)
        self.results.append(result)
        self._event(EVENT_ATTEMPT_END, prediction=safe_files.is_regular(self.layout.prediction), **result.as_dict())
        return result

    async def _fallback(self, reason: str) -> SolveOutcome:
        """Run the last edited solver.py once; publish its prediction if it writes one."""
        script = await asyncio.to_thread(self._fallback_script)
        if script is None:
            self._event(EVENT_FALLBACK, ran=False, reason=reason)
            return self._outcome(FAILED, None, f"{reason}; fallback skipped: solver.py was never edited")
        await asyncio.to_thread(safe_files.write_atomic, self.layout.solver_py, script)
        sandbox = SandboxLimits(timeout_s=float(self.limits.tool_timeout_s))
        run = await asyncio.to_thread(run_solver_script, self.layout, sandbox)
        report = render_run(run, self_check=False, show_rows=0)
        self._event(EVENT_FALLBACK, ran=True, status=run.status, report=report[:2000])
        if run.status == "OK" and safe_files.is_regular(self.layout.prediction):
            path = await self._publish(None)
            return self._outcome(FALLBACK, path, reason)
        first_line = report.splitlines()[1] if len(report.splitlines()) > 1 else report
        return self._outcome(FAILED, None, f"{reason}; fallback run {run.status}: {first_line[:300]}")

    def _fallback_script(self) -> str | None:
        """The current solver.py if edited, else the last edited one of an earlier attempt."""
        self._remember_edits()
        return self.last_edited

    def _remember_edits(self) -> None:
        current = _read(self.layout.solver_py)
        if current is not None and current != _read(self.layout.pristine):
            self.last_edited = current

    async def _publish(self, attempt: int | None) -> Path:
        path = await asyncio.to_thread(publish_prediction, self.layout.prediction, self.output_dir, self.brief.task_id)
        self._event(EVENT_PUBLISHED, attempt=attempt, path=str(path))
        return path

    async def _solver_view(self) -> str:
        result = await asyncio.to_thread(self.toolbox.call, "read_solver", {"limit": 2000})
        return result.text

    def _outcome(self, status: TaskStatus, prediction: Path | None, reason: str | None) -> SolveOutcome:
        return SolveOutcome(
            task_id=self.brief.task_id, status=status, attempts=len(self.results),
            requests=sum(r.requests for r in self.results), usage=self.usage.as_dict(), seconds=0.0,
            prediction=prediction, reason=reason, attempt_results=list(self.results),
        )

    def _event(self, kind: str, **fields: Any) -> None:
        if self.trace is not None:
            self.trace.event(kind, **fields)


async def _fit_prompt(
    brief: TaskBrief, client: LLMClient, limits: Limits, evidence_hints: str, trace: TraceWriter | None
) -> TaskBrief:
    """Over the prompt budget: ask the relevance votes, then fold the least relevant tables."""
    before = first_prompt_tokens(brief, evidence_hints)
    if before <= limits.prompt_budget:
        return brief
    votes = await vote_table_relevance(client, brief.question, brief.digest, RELEVANCE_VOTES) if brief.digest else {}
    fitted = await asyncio.to_thread(fit_brief, brief, limits.prompt_budget, evidence_hints=evidence_hints,
                                     relevance=votes)
    if trace is not None:
        trace.event(EVENT_PROMPT_FITTED, budget=limits.prompt_budget, tokens_before=before,
                    tokens_after=first_prompt_tokens(fitted, evidence_hints), folded=list(fitted.folded),
                    votes=votes)
    return fitted


def _why_rejected(result: AttemptResult) -> str:
    if result.error is not None:
        return f"attempt {result.number} ended with {result.error}"
    return f"attempt {result.number} ended ({result.ended}) without prediction.csv"


def _read(path: Path) -> str | None:
    try:
        return safe_files.read_text(path)  # solver.py is sandbox-writable: never followed
    except (OSError, UnsafeFile, UnicodeDecodeError):
        return None


def _interrupt(catalog: Catalog) -> None:
    """Stop whatever the catalog is running (after a tool timeout), a table load included."""
    catalog.interrupt()
