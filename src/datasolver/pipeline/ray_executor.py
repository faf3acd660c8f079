"""The Ray executor: each task a Ray task (prepare + agent + publish) on an existing cluster.

- The driver (the `datasolver run` process) discovers the tasks, skips those with a prediction
  (resume), plans each task against the time budget as it submits it, and writes
  run_summary.json from the records the Ray tasks return.
- A Ray task reserves `cpus_per_task` CPUs and runs `run_task` in its own event loop: a scratch
  copy in the worker's local temporary folder (or `--scratch` when given), then the agent.
  Workers write the prediction (`OUTPUT_DIR/<task_id>/prediction.csv`) and the trace
  (`<logs>/<task_id>/trace.jsonl`) themselves, so the input, output and logs folders must be the
  same path on every node (a shared file system); the input is only read.
- Model requests across the whole cluster go through one small actor, `RequestSlots`, which hands
  out at most `workers` slots; each request holds one while it is in flight.
- At most `2 × workers` tasks are submitted at a time (so the next tasks prepare while others wait
  on the model), in input order. A task's deadline starts when its worker starts it.

Ray is an optional dependency (`pip install 'datasolver[ray]'`); it is imported only here.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasolver.data import Task
from datasolver.llm import RequestGate
from datasolver.pipeline.budget import Mode, TaskPlan
from datasolver.pipeline.config import VIDEO_SHARE, RunConfig
from datasolver.pipeline.errors import PipelineError
from datasolver.pipeline.executor import BatchRun, internal_error
from datasolver.pipeline.summary import TaskRecord
from datasolver.pipeline.task import TaskSetup, TaskSolver, planned, run_task
from datasolver.request_slots import RequestSlots

RAY_MISSING = "the Ray executor needs Ray: pip install 'datasolver[ray]'"


class RayUnavailable(PipelineError):
    """Ray is not installed, or the cluster cannot be reached."""


def import_ray() -> Any:
    """The `ray` module, or RayUnavailable with the install hint."""
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(RAY_MISSING) from exc
    return ray


def slot_gate(slots: Any) -> RequestGate:
    """A request gate for LLMClient that holds one of the actor's slots per request."""

    @asynccontextmanager
    async def gate() -> AsyncIterator[None]:
        token = uuid.uuid4().hex
        try:
            await slots.acquire.remote(token)
            yield
        finally:
            slots.release.remote(token)  # submitted at once; no need to wait for it

    return gate


@dataclass(frozen=True)
class RelativePlan:
    """A TaskPlan whose deadline is seconds from the worker's start (monotonic clocks are per node)."""

    mode: Mode
    seconds: float
    reason: str | None

    @classmethod
    def of(cls, plan: TaskPlan, now: float) -> RelativePlan:
        return cls(plan.mode, max(plan.deadline - now, 0.0), plan.reason)

    def start(self) -> TaskPlan:
        return TaskPlan(self.mode, time.monotonic() + self.seconds, self.reason)


def run_on_worker(task: Task, config: RunConfig, plan: RelativePlan, slots: Any, solver: TaskSolver | None) -> TaskRecord:
    """One task on a Ray worker: `run_task` in a fresh event loop, model requests through the slots."""
    temporary = config.scratch_dir is None
    scratch_root = Path(tempfile.mkdtemp(prefix="datasolver-scratch-")) if temporary else config.scratch_dir
    assert scratch_root is not None
    try:
        setup = TaskSetup(
            scratch_root=scratch_root, output_dir=config.output_dir, logs_dir=config.logs_dir,
            settings=config.settings, limits=config.limits, doc_llm=config.doc_llm, solver=solver,
            keep_scratch=config.keep_scratch or not temporary, request_gate=slot_gate(slots), votes=config.votes,
        )
        started = plan.start()
        video_budget_s = max(started.deadline - time.monotonic(), 0.0) * VIDEO_SHARE
        return asyncio.run(run_task(task, setup, solve_turn=planned(started), video_budget_s=video_budget_s))
    finally:
        if temporary and not config.keep_scratch:
            shutil.rmtree(scratch_root, ignore_errors=True)


class RayExecutor:
    """Tasks as Ray tasks on the cluster at `address` (None: the running Ray, else a local one)."""

    name = "ray"

    def __init__(self, address: str | None = None, *, cpus_per_task: float = 1.0) -> None:
        if cpus_per_task <= 0:
            raise ValueError(f"cpus_per_task must be > 0, got {cpus_per_task}")
        self.address = address
        self.cpus_per_task = cpus_per_task
        self.slot_stats: dict[str, int] | None = None  # the request slots' counters after the run

    async def run(self, todo: list[Task], batch: BatchRun) -> None:
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except Exception as exc:  # ConnectionError and Ray's own errors for a bad address
                raise RayUnavailable(f"cannot start or join Ray at {self.address or 'a local cluster'}: {exc}") from exc
        try:
            await self._run(ray, todo, batch)
        finally:
            if started_here:
                ray.shutdown()

    async def _run(self, ray: Any, todo: list[Task], batch: BatchRun) -> None:
        config = batch.config
        slots = ray.remote(num_cpus=0)(RequestSlots).remote(config.workers)
        remote = ray.remote(run_on_worker).options(num_cpus=self.cpus_per_task, max_retries=0)
        queue = list(todo)
        waiting = len(queue)
        pending: dict[Any, tuple[Task, TaskPlan]] = {}
        while queue or pending:
            while queue and len(pending) < 2 * config.workers:
                task = queue.pop(0)
                plan = batch.budget.plan(waiting)
                waiting -= 1
                batch.progress.task_started(task.task_id, plan.mode)
                ref = remote.remote(task, config, RelativePlan.of(plan, time.monotonic()), slots, batch.solver)
                pending[ref] = (task, plan)
            done, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1)
            for ref in done:
                task, plan = pending.pop(ref)
                try:
                    record = await ref
                except Exception as exc:  # the worker died or Ray failed the task
                    record = internal_error(task, exc)
                if plan.mode != "fallback_only":
                    batch.budget.record(record.seconds)
                batch.finished(record)
        self.slot_stats = await slots.stats.remote()
