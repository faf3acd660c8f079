"""Executors: how a batch's tasks are run once discovery, resume and the summary are set up.

One interface, two implementations: `LocalExecutor` (the default: asyncio in this process, a
semaphore of `workers` around the model's part of each task, the next tasks prepared meanwhile)
and `datasolver.pipeline.ray_executor.RayExecutor` (each task a Ray task on a cluster). Both
report every finished task through `BatchRun.finished`, which the batch turns into the summary.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from datasolver.agent import TaskSolver, solve_task
from datasolver.data import Task
from datasolver.errors import DatasolverError
from datasolver.llm import ServerFacts
from datasolver.pipeline.budget import TaskPlan, TimeBudget
from datasolver.pipeline.config import PREPARE_SHARE, RunConfig
from datasolver.pipeline.progress import Progress
from datasolver.pipeline.summary import TaskRecord
from datasolver.pipeline.task import TaskSetup, run_task


@dataclass
class BatchRun:
    """What an executor gets from the batch: settings, folders, the time budget and where records go."""

    config: RunConfig
    scratch_root: Path
    budget: TimeBudget
    progress: Progress
    finished: Callable[[TaskRecord], None]  # called once per task, in completion order
    solver: TaskSolver = solve_task
    facts: ServerFacts = field(default_factory=ServerFacts)
    """What the endpoint showed of itself (the preflight's answers), shared by every task."""
    run_id: str | None = None
    """The run's id: each task's `task_start` trace event carries it."""


class Executor(Protocol):
    """Runs `todo` (tasks without a prediction, in input order) and reports each through `batch.finished`."""

    name: str

    async def run(self, todo: list[Task], batch: BatchRun) -> None: ...


class LocalExecutor:
    """Every task in this process's event loop; blocking work in threads."""

    name = "local"

    async def run(self, todo: list[Task], batch: BatchRun) -> None:
        config = batch.config
        # Up to `workers` tasks talk to the model; up to as many more are prepared ahead, a few at a
        # time (CPU work), in input order, so the next task is ready when a worker frees up.
        in_flight = asyncio.Semaphore(2 * config.workers)
        preparing = asyncio.Semaphore(max(1, min(config.workers, os.cpu_count() or 1)))
        solving = asyncio.Semaphore(config.workers)
        waiting = len(todo)
        setup = TaskSetup.from_config(config, scratch_root=batch.scratch_root, solver=batch.solver,
                                      facts=batch.facts, run_id=batch.run_id)

        async def work(task: Task) -> None:
            try:
                record = await attempt(task)
            except Exception as exc:  # the stages record their own failures; this is a last guard
                record = internal_error(task, exc)
            batch.finished(record)

        async def attempt(task: Task) -> TaskRecord:
            @asynccontextmanager
            async def solve_turn() -> AsyncIterator[TaskPlan]:
                nonlocal waiting
                async with solving:
                    plan = batch.budget.plan(waiting)
                    waiting -= 1
                    batch.progress.task_started(task.task_id, plan.mode)
                    solve_started = time.monotonic()
                    yield plan
                    if plan.mode != "fallback_only":
                        batch.budget.record(time.monotonic() - solve_started)  # the time a worker was busy

            @asynccontextmanager
            async def prepare_turn() -> AsyncIterator[None]:
                async with preparing:
                    batch.progress.task_preparing(task.task_id)  # said before the passes, not after them
                    yield

            async with in_flight:
                return await run_task(task, setup, solve_turn=solve_turn, prepare_turn=prepare_turn,
                                      prepare_budget_s=config.task_timeout_s * PREPARE_SHARE)

        await asyncio.gather(*(work(t) for t in todo))


def internal_error(task: Task, exc: BaseException) -> TaskRecord:
    """The record of a task whose run raised past every stage's own guard."""
    error = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, DatasolverError):  # a refusal a person can act on (e.g. a linked logs folder), not a bug
        return TaskRecord(task.task_id, "failed", reason=str(exc), error=error)
    return TaskRecord(task.task_id, "failed", reason=f"internal error: {error}", error=error)
