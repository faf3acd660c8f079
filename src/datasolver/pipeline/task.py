"""One task end to end, wired in one place: prepare → documents → agent (→ fallback).

Nothing here raises for a task's own trouble: every outcome, exceptions included, becomes a
TaskRecord. Blocking work (scratch copy, document parsing, the fallback run) goes to threads so
the event loop keeps serving the other tasks' model requests.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datasolver.data import Task
from datasolver.llm import LLMClient, LLMSettings, TraceWriter, Usage
from datasolver.pipeline.budget import TaskPlan
from datasolver.pipeline.config import FAST_MAX_ATTEMPTS, FAST_MAX_REQUESTS, HARD_STOP_GRACE_S
from datasolver.pipeline.documents import prepare_task_documents
from datasolver.pipeline.fallback import run_fallback
from datasolver.pipeline.summary import TaskRecord
from datasolver.solver import prepare_task

if TYPE_CHECKING:
    from datasolver.agent import Limits

# `datasolver.agent.solve_task` or anything with its signature returning a SolveOutcome
# (tests and benchmarks pass their own).
TaskSolver = Callable[..., Awaitable[Any]]


def default_solver() -> TaskSolver:
    """`datasolver.agent.solve_task` (imported late: the agent is the heaviest room)."""
    from datasolver.agent import solve_task

    return solve_task


def task_limits(base: Limits | None, plan: TaskPlan) -> Limits:
    """The agent's limits for this task: its deadline, and fewer attempts in fast mode."""
    from datasolver.agent import Limits

    limits = base if base is not None else Limits()
    changes: dict[str, Any] = {"deadline": plan.deadline}
    if plan.mode == "fast":
        changes["max_attempts"] = min(limits.max_attempts, FAST_MAX_ATTEMPTS)
        changes["max_requests_per_attempt"] = min(limits.max_requests_per_attempt, FAST_MAX_REQUESTS)
    return dataclasses.replace(limits, **changes)


async def run_task(
    task: Task,
    *,
    scratch_root: Path,
    output_dir: Path,
    logs_dir: Path,
    settings: LLMSettings,
    plan: TaskPlan,
    limits: Limits | None = None,
    doc_llm: bool = True,
    solver: TaskSolver | None = None,
    keep_scratch: bool = True,
) -> TaskRecord:
    """Solve one task and return its record; the answer lands in `<output_dir>/<task_id>/`."""
    started = time.monotonic()
    trace = TraceWriter(logs_dir, task_id=task.task_id, secrets=[settings.api_key])
    usage = Usage()
    record = TaskRecord(task.task_id, "failed", mode=plan.mode)
    trace.event("task_start", mode=plan.mode, plan_reason=plan.reason,
                seconds_to_deadline=round(plan.deadline - started, 1), question=task.question)
    scratch: Path | None = None
    try:
        scratch = await asyncio.to_thread(prepare_task, task.dir, scratch_root)
        if plan.mode == "fallback_only":
            await _fallback(scratch, output_dir, record, plan.reason or "no time left for the model")
        else:
            hints = await _documents(scratch, settings if doc_llm else None, trace, usage, record)
            await _agent(scratch, task, output_dir, settings, plan, limits, solver, trace, usage, hints, record)
    except Exception as exc:  # prepare failed, or a bug here: the batch goes on
        record.status, record.reason = "failed", f"{type(exc).__name__}: {exc}"
        record.error = record.reason
    finally:
        record.seconds = time.monotonic() - started
        record.usage = usage.as_dict()
        record.requests = record.usage["requests"]
        trace.event("task_end", **record.to_json())
        if scratch is not None and not keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return record


async def _documents(
    scratch: Path, settings: LLMSettings | None, trace: TraceWriter, usage: Usage, record: TaskRecord
) -> str:
    """Document tables; a failure here is traced and the task goes on without them."""
    try:
        report, hints = await asyncio.to_thread(
            prepare_task_documents, scratch, settings=settings, trace=trace, usage=usage
        )
    except Exception as exc:
        trace.event("documents_failed", error=f"{type(exc).__name__}: {exc}")
        return ""
    record.document_tables = len(report.tables)
    trace.event("documents", summary=report.summary(), warnings=report.warnings,
                skipped=[f"{s.source}: {s.reason}" for s in report.skipped])
    return hints


async def _agent(
    scratch: Path, task: Task, output_dir: Path, settings: LLMSettings, plan: TaskPlan,
    limits: Limits | None, solver: TaskSolver | None, trace: TraceWriter, usage: Usage, hints: str,
    record: TaskRecord,
) -> None:
    """Run the agent under a hard stop; if it raises or overstays, run our own fallback."""
    solve = solver or default_solver()
    task_limits_ = task_limits(limits, plan)
    hard_stop = max(plan.deadline - time.monotonic(), 0.0) + HARD_STOP_GRACE_S
    client = LLMClient(settings, trace, usage)
    try:
        outcome = await asyncio.wait_for(
            solve(scratch, client, output_dir, limits=task_limits_, trace=trace, evidence_hints=hints),
            timeout=hard_stop,
        )
    except asyncio.TimeoutError:
        record.error = f"hard stop: the agent overran its deadline by {HARD_STOP_GRACE_S:.0f}s"
        await _fallback(scratch, output_dir, record, record.error)
        return
    except Exception as exc:
        record.error = f"{type(exc).__name__}: {exc}"
        trace.event("task_exception", error=record.error)
        await _fallback(scratch, output_dir, record, f"agent raised {record.error}")
        return
    finally:
        await client.aclose()
    record.status = outcome.status
    record.attempts = outcome.attempts
    record.reason = outcome.reason
    record.prediction = str(outcome.prediction) if outcome.prediction is not None else None


async def _fallback(scratch: Path, output_dir: Path, record: TaskRecord, why: str) -> None:
    path, what = await asyncio.to_thread(run_fallback, scratch, output_dir)
    record.status = "fallback" if path is not None else "failed"
    record.prediction = str(path) if path is not None else None
    record.reason = f"{why}; {what}"
