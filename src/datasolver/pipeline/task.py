"""One task end to end, wired in one place: prepare → documents → agent (→ fallback).

Two stages, so a batch can prepare the next tasks while earlier ones wait on the model:
`prepare_stage` (scratch copy, deterministic document tables: CPU and disk, no model) and
`solve_stage` (model pass over narrative documents when allowed, then the agent under a deadline).
`run_task` is both in a row, and both executors (local and Ray) call it with one `TaskSetup`. Each
stage returns its outcome (`PreparedTask`; the solver's `SolveOutcome` as it is, or the pipeline's
own when the agent could not run or answer) and `run_task` builds the task's one TaskRecord from them. Nothing here raises for a task's own trouble: every outcome, exceptions
included, becomes that record. Blocking work goes to threads so the event loop keeps
serving the other tasks' model requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasolver.agent import FALLBACK_CONFIDENCE, Deadline, Limits, SolveOutcome, TaskRun, TaskSolver, solve_task
from datasolver.data import Task
from datasolver.data.layout import ScratchLayout
from datasolver.llm import LLMClient, LLMSettings, RequestGate, ServerFacts, TraceWriter, Usage
from datasolver.pipeline.budget import Mode, TaskPlan
from datasolver.pipeline.config import (
    FALLBACK_TIMEOUT_S,
    FAST_MAX_ATTEMPTS,
    FAST_MAX_REQUESTS,
    HARD_STOP_MARGIN_S,
    PREPARE_SHARE,
    RunConfig,
)
from datasolver.pipeline.documents import DOCUMENTS_BUDGET_S, prepare_task_documents_async
from datasolver.pipeline.summary import TaskRecord
from datasolver.pipeline.video import has_media, prepare_task_video
from datasolver.pipeline.votes import VotePolicy, solve_by_vote
from datasolver.sandbox import SandboxLimits, UnsafeFile, safe_files
from datasolver.solver import prepare_scratch, publish_prediction, run_fallback

# The final solver.py is traced up to this size (a model may paste data into it).
FINAL_SOLVER_MAX_CHARS = 60_000


def task_limits(base: Limits | None, mode: Mode) -> Limits:
    """The agent's limits for a task run in ``mode``: fewer attempts and requests in fast mode (the
    task's deadline is not a limit: it travels on the `TaskRun`)."""
    limits = base if base is not None else Limits()
    if mode != "fast":
        return limits
    return dataclasses.replace(limits, max_attempts=min(limits.max_attempts, FAST_MAX_ATTEMPTS),
                               max_requests_per_attempt=min(limits.max_requests_per_attempt, FAST_MAX_REQUESTS))


@dataclass(frozen=True)
class TaskSetup:
    """How every task of a run is solved: folders, the model, limits, and the shared request gate."""

    scratch_root: Path
    output_dir: Path
    logs_dir: Path
    settings: LLMSettings
    limits: Limits | None = None
    doc_llm: bool = True
    solver: TaskSolver = solve_task
    keep_scratch: bool = True
    request_gate: RequestGate | None = None
    facts: ServerFacts | None = None
    votes: VotePolicy | None = None
    run_id: str | None = None
    """The batch's run id, written into each task's `task_start` trace event."""

    @classmethod
    def from_config(cls, config: RunConfig, *, scratch_root: Path,
                    solver: TaskSolver = solve_task, request_gate: RequestGate | None = None,
                    facts: ServerFacts | None = None, run_id: str | None = None) -> TaskSetup:
        """The one way a run's settings become a task setup (the local and the Ray executor alike):
        what differs per executor is where scratch lives, the request gate and shared server facts.
        Without shared facts, the configured window still starts every task's own."""
        return cls(
            scratch_root=scratch_root, output_dir=config.output_dir, logs_dir=config.logs_dir,
            settings=config.settings, limits=config.limits, doc_llm=config.doc_llm, solver=solver,
            keep_scratch=not config.removes_scratch, request_gate=request_gate,
            facts=facts if facts is not None else ServerFacts(config.settings.context_window),
            votes=config.votes, run_id=run_id,
        )


@dataclass
class PreparedTask:
    """A task after the prepare stage; `error` says why preparing failed (then `layout` is None)."""

    task: Task
    trace: TraceWriter
    usage: Usage
    layout: ScratchLayout | None = None
    """The scratch copy's layout, made and checked once by prepare: documents, video, the fallback
    and the solver (inside its `TaskRun`) take it as it is."""
    error: str | None = None
    document_tables: int = 0
    untabled_documents: bool = False
    """Some document gave no table without a model (narrative prose: the model pass may help)."""
    passes_seconds: float = 0.0
    """Time the documents and video passes took; it is taken off the task's deadline."""
    seconds: float = 0.0


async def prepare_stage(task: Task, setup: TaskSetup, *, prepare_budget_s: float | None = None) -> PreparedTask:
    """Scratch copy, deterministic document tables and the video pass (no model request).

    The documents and video passes get at most `prepare_budget_s` seconds together (the documents
    pass also at most DOCUMENTS_BUDGET_S); what they take is later taken off the task's deadline."""
    started = time.monotonic()
    settings = setup.settings
    trace = TraceWriter(setup.logs_dir, task_id=task.task_id, secrets=[settings.api_key, *settings.url_secrets()])
    prepared = PreparedTask(task, trace, Usage())
    run = {"run_id": setup.run_id} if setup.run_id else {}
    trace.event("task_start", question=task.question, task_dir=str(task.dir), **run)
    try:
        prepared.layout = await asyncio.to_thread(prepare_scratch, task, setup.scratch_root)
        started_passes = time.monotonic()
        await _documents(prepared, None, budget_s=_share_left(prepare_budget_s, 0.0))
        await _video(prepared, _share_left(prepare_budget_s, time.monotonic() - started_passes))
        prepared.passes_seconds = time.monotonic() - started_passes
    except Exception as exc:  # the task cannot run; the batch goes on
        prepared.error = f"{type(exc).__name__}: {exc}"
    prepared.seconds = time.monotonic() - started
    return prepared


def _failed(task: Task, error: str) -> SolveOutcome:
    """The outcome of a solve stage that could not run (the task's own trouble, or a bug here)."""
    return SolveOutcome(task.task_id, "failed", reason=error, error=error)


async def solve_stage(prepared: PreparedTask, setup: TaskSetup, plan: TaskPlan) -> SolveOutcome:
    """The model's part (or only the fallback run, as `plan` says); never raises for the task's trouble.

    Model requests go through ``setup.request_gate`` (the Ray executor's cluster-wide limit) and
    share ``setup.facts`` (what the endpoint showed of itself). With ``setup.votes.votes > 1``
    (full mode only) the agent solves the task several times independently and the answer is voted
    (`datasolver.pipeline.votes`).
    """
    trace = prepared.trace
    if prepared.error is not None or prepared.layout is None:
        return _failed(prepared.task, prepared.error or "the task was not prepared")
    try:
        deadline = Deadline(plan.deadline - prepared.passes_seconds)  # what the passes took is taken off
        trace.event("solve_start", mode=plan.mode, plan_reason=plan.reason,
                    seconds_to_deadline=round(deadline.seconds_left() or 0.0, 1))
        if plan.mode == "fallback_only":
            return await _fallback(prepared, setup.output_dir, plan.reason or "no time left for the model")
        if setup.doc_llm and prepared.untabled_documents:  # documents are read again: within the deadline's share
            await _documents(prepared, setup.settings, setup.request_gate,
                             budget_s=(deadline.seconds_left() or 0.0) * PREPARE_SHARE)
        votes = setup.votes
        policy = votes if votes is not None and plan.mode == "full" else VotePolicy()
        return await _agent(prepared, setup, policy, task_limits(setup.limits, plan.mode), deadline)
    except Exception as exc:  # a bug here must not stop the batch
        return _failed(prepared.task, f"{type(exc).__name__}: {exc}")


# Entered around the solve stage; yields the task's plan (a batch plans a task when a worker frees up).
SolveTurn = Callable[[], AbstractAsyncContextManager[TaskPlan]]


def planned(plan: TaskPlan) -> SolveTurn:
    """A solve turn with a plan made beforehand (the Ray worker's)."""

    @asynccontextmanager
    async def turn() -> AsyncIterator[TaskPlan]:
        yield plan

    return turn


async def run_task(
    task: Task,
    setup: TaskSetup,
    *,
    solve_turn: SolveTurn,
    prepare_budget_s: float | None = None,
    prepare_turn: Callable[[], AbstractAsyncContextManager[Any]] = nullcontext,
) -> TaskRecord:
    """Solve one task and return its record; the answer lands in `<output_dir>/<task_id>/`.

    The one place a task is wired: `prepare_stage` inside `prepare_turn()` (a batch bounds how many
    prepare at once), then `solve_stage` inside `solve_turn()`, which yields the task's plan. Each
    stage returns its outcome; the record is built here, once, from both (also when the solve
    stage is cancelled: the trace still ends and a temporary scratch copy is still removed).
    """
    async with prepare_turn():
        prepared = await prepare_stage(task, setup, prepare_budget_s=prepare_budget_s)
    async with solve_turn() as plan:
        started = time.monotonic()
        outcome = _failed(task, "cancelled before the task ended")
        try:
            outcome = await solve_stage(prepared, setup, plan)
        finally:
            usage = prepared.usage.as_dict()
            record = TaskRecord(
                task.task_id, outcome.status, mode=plan.mode, attempts=outcome.attempts, requests=usage["requests"],
                usage=usage, seconds=prepared.seconds + time.monotonic() - started, reason=outcome.reason,
                error=outcome.error, prediction=str(outcome.prediction) if outcome.prediction is not None else None,
                document_tables=prepared.document_tables, vote=outcome.vote, confidence=outcome.confidence,
            )
            _close(prepared, record, keep_scratch=setup.keep_scratch)
    return record


def _close(prepared: PreparedTask, record: TaskRecord, *, keep_scratch: bool) -> None:
    """The trace's last events (the final solver.py, the record) and, unless kept, the scratch copy."""
    layout = prepared.layout
    if layout is not None:
        _trace_final_solver(prepared.trace, layout)
    prepared.trace.event("task_end", **record.to_json())
    if layout is not None and not keep_scratch:
        shutil.rmtree(layout.root, ignore_errors=True)


async def _documents(
    prepared: PreparedTask, settings: LLMSettings | None, request_gate: RequestGate | None = None, *,
    budget_s: float | None = None,
) -> None:
    """Document tables (with the model pass when `settings`), the deterministic reading within
    `budget_s` (None: DOCUMENTS_BUDGET_S); a failure is traced, the task goes on."""
    assert prepared.layout is not None
    budget_s = DOCUMENTS_BUDGET_S if budget_s is None else max(0.0, min(budget_s, DOCUMENTS_BUDGET_S))
    try:
        if settings is None:
            report = await prepare_task_documents_async(prepared.layout, task=prepared.task, budget_s=budget_s)
        else:
            async with LLMClient(settings, prepared.trace, prepared.usage, request_gate=request_gate) as client:
                report = await prepare_task_documents_async(prepared.layout, task=prepared.task, client=client,
                                                            budget_s=budget_s)
    except Exception as exc:  # a boundary: PDF/model parsers raise many types; the task goes on without
        prepared.trace.event("documents_failed", with_model=settings is not None, error=f"{type(exc).__name__}: {exc}")
        return
    prepared.untabled_documents = bool(report.skipped)
    prepared.document_tables = len(report.tables)
    prepared.trace.event("documents", with_model=settings is not None, summary=report.summary(),
                         warnings=report.warnings, skipped=[f"{s.source}: {s.reason}" for s in report.skipped])


def _share_left(budget_s: float | None, used_s: float) -> float | None:
    """What is left of the prepare stage's budget after `used_s` (None: no budget)."""
    return None if budget_s is None else max(0.0, budget_s - used_s)


async def _video(prepared: PreparedTask, budget_s: float | None) -> None:
    """The video pass when the task has media; a failure is traced and the task goes on."""
    assert prepared.layout is not None
    if not await asyncio.to_thread(has_media, prepared.layout):
        return
    started = time.monotonic()
    try:
        report = await asyncio.to_thread(prepare_task_video, prepared.layout, budget_s=budget_s)
    except Exception as exc:  # a boundary: media decoders raise many types; the task goes on without
        prepared.trace.event("video_failed", error=f"{type(exc).__name__}: {exc}")
        return
    prepared.trace.event("video", seconds=round(time.monotonic() - started, 2), videos=[
        {"source": v.source, "duration_s": v.duration_s, "frames": len(v.frames), "speech": len(v.speech),
         "notes": v.notes} for v in report.videos])


async def _agent(
    prepared: PreparedTask, setup: TaskSetup, policy: VotePolicy, limits: Limits, deadline: Deadline,
) -> SolveOutcome:
    """Run the agent under a hard stop; if it raises or overstays, run our own fallback.

    The task's `TaskRun` is gathered here, once: the prepared layout and task, a client whose trace is
    the task's, the task's limits and deadline; the solver gets it as it is (the votes' solves a copy
    each, with their own output folder, time share and temperature)."""
    layout, trace = prepared.layout, prepared.trace
    assert layout is not None
    solve = setup.solver  # the agent's `solve_task` unless a test or a benchmark gives its own
    client = LLMClient(setup.settings, trace, prepared.usage, request_gate=setup.request_gate, facts=setup.facts)
    run = TaskRun(prepared.task, layout, client, setup.output_dir, limits, deadline=deadline)
    grace = policy.votes * (2 * run.limits.tool_timeout_s) + HARD_STOP_MARGIN_S

    async def solving() -> SolveOutcome:
        return await solve(run) if policy.votes == 1 else await _vote(run, solve, policy)

    try:
        return await asyncio.wait_for(solving(), timeout=max(deadline.seconds_left() or 0.0, 0.0) + grace)
    except asyncio.TimeoutError:
        error = f"hard stop: the agent was still running {grace:g}s after its deadline"
        return await _fallback(prepared, setup.output_dir, error, error=error)
    except Exception as exc:  # a boundary: whatever the agent (or a test's solver) raised, the fallback answers
        error = f"{type(exc).__name__}: {exc}"
        trace.event("task_exception", error=error)
        return await _fallback(prepared, setup.output_dir, f"agent raised {error}", error=error)
    finally:
        await client.aclose()


def _trace_final_solver(trace: TraceWriter, layout: ScratchLayout) -> None:
    """The final solver.py in the trace (the report shows it; the scratch folder may be deleted).

    solver.py is the sandbox's to write: it is read without following a link or opening a FIFO
    (a link to /proc/self/environ put the parent's environment in the trace and the report)."""
    try:
        code = safe_files.read_text(layout.solver_py, errors="replace")
    except UnsafeFile as exc:
        trace.event("solver_final", code="", note=f"not read: {exc}")
        return
    except OSError:
        return
    note = None
    if len(code) > FINAL_SOLVER_MAX_CHARS:
        note = f"trimmed: first {FINAL_SOLVER_MAX_CHARS} of {len(code)} characters"
        code = code[:FINAL_SOLVER_MAX_CHARS]
    trace.event("solver_final", code=code, note=note)


async def _vote(run: TaskRun, solve: TaskSolver, policy: VotePolicy) -> SolveOutcome:
    """Independent solves into `<scratch>/votes/solve_<n>/`, voted; the chosen answer is published.
    Returns the chosen solve's outcome, with every solve's attempts and the vote's record.

    Each solve gets the task's run with its own output folder, temperature and an equal share of the
    time left for the solves that may still follow.
    """
    task_id = run.task.task_id

    async def once(number: int, temperature: float, folder: Path) -> SolveOutcome:
        share = run.deadline.share(policy.votes - number + 1)
        return await solve(dataclasses.replace(run, output_dir=folder, deadline=share,
                                               chat_options={"temperature": temperature}))

    vote = await solve_by_vote(once, policy, run.layout.votes, task_id, run.trace.event)
    chosen = vote.outcomes[vote.chosen if vote.chosen is not None else -1]
    chosen.attempts = sum(o.attempts for o in vote.outcomes)
    if vote.chosen is not None and chosen.prediction is not None:
        chosen.prediction = await asyncio.to_thread(publish_prediction, chosen.prediction, run.output_dir, task_id)
    chosen.vote = vote.to_json()
    return chosen


async def _fallback(prepared: PreparedTask, output_dir: Path, why: str, *, error: str | None = None) -> SolveOutcome:
    """The current solver.py, run once with no model (the agent raised, overstayed, or got no time)."""
    assert prepared.layout is not None
    done = await asyncio.to_thread(run_fallback, prepared.layout, output_dir, SandboxLimits(timeout_s=FALLBACK_TIMEOUT_S))
    return SolveOutcome(prepared.task.task_id, "fallback" if done.prediction is not None else "failed",
                        prediction=done.prediction, reason=f"{why}; {done.note}", error=error,
                        confidence=FALLBACK_CONFIDENCE if done.prediction is not None else None)
