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
- What a task learns about the server (its context window, prefill rate: `ServerFacts`) comes
  back with its record; the driver merges it and sends it with the tasks it submits after, so
  later tasks do not ask again.
- At most `2 × workers` tasks are submitted at a time (so the next tasks prepare while others wait
  on the model), in input order. A task's deadline starts when its worker starts it.
- A Ray this executor starts itself listens on loopback only: Ray's single-machine mode
  (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`, read when `ray` is imported) makes the node address
  127.0.0.1, and every Ray server (GCS, raylet, object manager, each worker's and the driver's
  gRPC port, the agents) binds to the node address when it is loopback, else to all interfaces.
  The node address is checked after the start; anything else stops Ray with an error.
- The model key (and credentials inside the endpoint URL) never travel in a task's arguments:
  the settings sent carry none, and each task's Ray runtime environment sets `MODEL_API_KEY`
  (`MODEL_API_URL`) in its worker's environment, where `worker_settings` reads them back. A
  driver with no key leaves the workers' own `MODEL_API_KEY` (set by whoever runs the cluster).

Ray is an optional dependency (`pip install 'datasolver[ray]'`); it is imported only here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from datasolver.agent import TaskSolver, solve_task
from datasolver.data import Task
from datasolver.llm import LLMSettings, RequestGate, ServerFacts, redact_url
from datasolver.llm.constants import ENV_API_KEY, ENV_API_URL
from datasolver.pipeline.budget import Mode, TaskPlan
from datasolver.pipeline.config import PREPARE_SHARE, RunConfig
from datasolver.pipeline.errors import PipelineError
from datasolver.pipeline.executor import BatchRun, internal_error
from datasolver.pipeline.summary import TaskRecord
from datasolver.pipeline.task import TaskSetup, planned, run_task
from datasolver.request_slots import RequestSlots

RAY_MISSING = "the Ray executor needs Ray: pip install 'datasolver[ray]'"
# Ray's single-machine mode (its default on macOS and Windows): the node address is 127.0.0.1, so
# every Ray server binds to loopback. Read once, when `ray` is first imported.
SINGLE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
RAY_ADDRESS_ENV = "RAY_ADDRESS"


class RayUnavailable(PipelineError):
    """Ray is not installed, the cluster cannot be reached, or a local Ray would not stay on loopback."""


def import_ray(*, single_machine: bool = False) -> Any:
    """The `ray` module, or RayUnavailable with the install hint. `single_machine`: a local Ray is
    about to be started here, so Ray's single-machine mode is switched on before the import."""
    if single_machine:
        os.environ[SINGLE_MACHINE_ENV] = "0"
    try:
        import ray
    except ImportError as exc:
        raise RayUnavailable(RAY_MISSING) from exc
    return ray


def starts_local_ray(address: str | None) -> bool:
    """Whether `ray.init(address)` here starts a new Ray rather than joining one: no address and no
    $RAY_ADDRESS, or "local". (Without either, Ray itself would join a `ray start` cluster of this
    machine; the executor starts its own instead, as docs/scale.md says.)"""
    target = address or os.environ.get(RAY_ADDRESS_ENV) or None
    return target is None or target == "local"


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def start_local_ray(ray: Any) -> None:
    """Start a Ray on this machine that listens on loopback only (RayUnavailable when it would not)."""
    if os.environ.get(SINGLE_MACHINE_ENV) != "0":  # `ray` was imported before the executor could set it
        raise RayUnavailable("cannot start a loopback-only local Ray: Ray was imported before "
                             f"{SINGLE_MACHINE_ENV}=0 was set; start Ray yourself and pass --ray-address")
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    node_address = ray.util.get_node_ip_address()
    if not _loopback(node_address):
        ray.shutdown()
        raise RayUnavailable(
            f"refusing to run on a local Ray that listens on {node_address}, not only on loopback "
            f"({SINGLE_MACHINE_ENV}=0 did not take: was `ray` imported before {SINGLE_MACHINE_ENV} was "
            "set?). Start Ray yourself (docs/scale.md) and pass --ray-address.")


def split_secrets(settings: LLMSettings) -> tuple[LLMSettings, dict[str, str]]:
    """The settings without the key (and the endpoint's credentials), and the environment variables
    that carry them to a worker (`worker_settings` puts them back)."""
    env: dict[str, str] = {}
    if settings.api_key:
        env[ENV_API_KEY] = settings.api_key
    url = settings.base_url
    if settings.url_secrets():
        env[ENV_API_URL] = url
        url = redact_url(url)
    return settings.replace(api_key=None, base_url=url), env


def worker_settings(settings: LLMSettings) -> LLMSettings:
    """On a worker: the key from its environment, and the endpoint URL when the one sent was redacted."""
    url = os.environ.get(ENV_API_URL)
    base_url = url if url and redact_url(url) == settings.base_url and url != settings.base_url else settings.base_url
    return settings.replace(api_key=os.environ.get(ENV_API_KEY) or None, base_url=base_url)


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


@dataclass(frozen=True)
class WorkerResult:
    """What a Ray task returns: the task's record and the server facts as it left them."""

    record: TaskRecord
    facts: ServerFacts


@dataclass(frozen=True)
class WorkerBatch:
    """What every Ray task of one batch is sent alike: the run's settings (without the key, which
    travels in the workers' environment), the cluster's request slots, the solver and the run id."""

    config: RunConfig
    slots: Any  # the RequestSlots actor's handle
    solver: TaskSolver = solve_task
    run_id: str | None = None


def run_on_worker(task: Task, plan: RelativePlan, facts: ServerFacts, batch: WorkerBatch) -> WorkerResult:
    """One task on a Ray worker: `run_task` in a fresh event loop, model requests through the slots.

    `facts` are what earlier tasks learnt about the server (the driver's merged copy); the task
    starts from them and returns them with what it learnt itself."""
    config = dataclasses.replace(batch.config, settings=worker_settings(batch.config.settings))
    scratch_root = config.scratch_dir or Path(tempfile.mkdtemp(prefix="datasolver-scratch-"))
    try:
        setup = TaskSetup.from_config(config, scratch_root=scratch_root, solver=batch.solver,
                                      request_gate=slot_gate(batch.slots), facts=facts, run_id=batch.run_id)
        started = plan.start()
        prepare_budget_s = max(started.deadline - time.monotonic(), 0.0) * PREPARE_SHARE
        record = asyncio.run(run_task(task, setup, solve_turn=planned(started), prepare_budget_s=prepare_budget_s))
        return WorkerResult(record, facts)
    finally:
        if config.removes_scratch:
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
        local = starts_local_ray(self.address)
        ray = import_ray(single_machine=local and "ray" not in sys.modules)
        started_here = not ray.is_initialized()
        if started_here:
            try:
                if local:
                    start_local_ray(ray)
                else:
                    ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except RayUnavailable:
                raise
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
        settings, secrets = split_secrets(config.settings)
        sent = WorkerBatch(dataclasses.replace(config, settings=settings), slots, batch.solver, batch.run_id)
        runtime_env = {"env_vars": secrets} if secrets else None
        remote = ray.remote(run_on_worker).options(num_cpus=self.cpus_per_task, max_retries=0,
                                                   runtime_env=runtime_env)
        facts = batch.facts  # the preflight's answers, and each task's learning merged as it returns
        queue = list(todo)
        waiting = len(queue)
        pending: dict[Any, tuple[Task, TaskPlan]] = {}
        while queue or pending:
            while queue and len(pending) < 2 * config.workers:
                task = queue.pop(0)
                plan = batch.budget.plan(waiting)
                waiting -= 1
                batch.progress.task_started(task.task_id, plan.mode)
                ref = remote.remote(task, RelativePlan.of(plan, time.monotonic()), facts, sent)
                pending[ref] = (task, plan)
            done, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1)
            for ref in done:
                task, plan = pending.pop(ref)
                try:
                    result: WorkerResult = await ref
                except Exception as exc:  # the worker died or Ray failed the task
                    record = internal_error(task, exc)
                else:
                    record = result.record
                    facts.merge(result.facts)
                if plan.mode != "fallback_only":
                    batch.budget.record(record.seconds)
                batch.finished(record)
        self.slot_stats = await slots.stats.remote()
