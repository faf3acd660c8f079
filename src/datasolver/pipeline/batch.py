"""A batch of tasks: discovery, resume, the check of the model endpoint, the time budget, and the
run summary; an executor runs them.

The default `LocalExecutor` (executor.py) runs an asyncio semaphore of `workers` around the
model's part of each task and prepares the next tasks meanwhile; model requests overlap on one
event loop and blocking work runs in threads (the loop gets a thread pool sized for the workers).
`RayExecutor` (ray_executor.py) runs each task as a Ray task. One task's failure is a record,
never the end of the batch.

Before the first task (and before any folder is made) the endpoint is checked once
(`datasolver.llm.preflight`): one that cannot be reached, refuses the key or does not know the
model stops the run with `EndpointUnusable`, instead of failing every task the same way.
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from datasolver.agent import Limits, TaskSolver, solve_task, warm_up
from datasolver.data import DataError, Task, discover_tasks
from datasolver.llm import LLMClient, ServerFacts
from datasolver.llm.preflight import check_endpoint
from datasolver.pipeline.budget import TimeBudget
from datasolver.pipeline.config import RunConfig, check_folders
from datasolver.pipeline.errors import InputError, OutputError, UnknownTasks
from datasolver.pipeline.executor import BatchRun, Executor, LocalExecutor
from datasolver.pipeline.progress import NullProgress, Progress
from datasolver.pipeline.resume import split_for_resume
from datasolver.pipeline.summary import RunSummary, TaskRecord, keep_earlier_summary, write_run_summary
from datasolver.run_logs import new_run_id, run_ids
from datasolver.sandbox import stop_all_runs
from datasolver.sandbox.fork_server import ForkServer, current_fork_server, use_fork_server
from datasolver.solver import SOLVER_PRELOAD, prediction_path

# Threads per worker: a task's own blocking step plus the agent's tool runs, with room to spare.
_THREADS_PER_WORKER = 2
_SPARE_THREADS = 4


def select_tasks(tasks: list[Task], wanted: tuple[str, ...] | None) -> list[Task]:
    """The tasks named in `wanted` (task ids or folder names), in input order; all when None."""
    if not wanted:
        return tasks
    known = {t.task_id: t for t in tasks} | {t.dir.name: t for t in tasks}
    missing = [w for w in wanted if w not in known]
    if missing:
        sample = ", ".join(sorted(t.task_id for t in tasks)[:10])
        more = f" … ({len(tasks)} in all)" if len(tasks) > 10 else ""
        raise UnknownTasks(f"no task named {', '.join(missing)} in the input folder; tasks: {sample}{more}")
    chosen = {id(known[w]) for w in wanted}
    return [t for t in tasks if id(t) in chosen]


async def run_batch(
    config: RunConfig, *, progress: Progress | None = None, solver: TaskSolver = solve_task,
    executor: Executor | None = None,
) -> RunSummary:
    """Run every selected task of `config.input_dir`; write predictions, traces and the summary.

    `executor` runs the tasks (default: `LocalExecutor`, asyncio in this process; or a `RayExecutor`).
    Raises EndpointUnusable (before any task, folder or summary) when the model endpoint cannot serve
    the run. The summary is `<logs>/run_summary-<run id>.json`, copied to `<logs>/run_summary.json`.
    """
    progress = progress or NullProgress()
    started = time.monotonic()
    tasks, summary = _discover(config)
    todo, done = split_for_resume(tasks, config.output_dir, force=config.force)
    facts = ServerFacts(config.settings.context_window)  # what the endpoint shows of itself, for every task
    if todo:
        summary.preflight = await _preflight(config, facts, progress, warm=solver is solve_task)
    _make_folders(config)
    keep_earlier_summary(config.logs_dir)
    for task in done:
        summary.add(TaskRecord(task.task_id, "skipped", mode="resume",
                               reason="a prediction exists (--force redoes it)",
                               prediction=str(prediction_path(config.output_dir, task.task_id))))
    scratch_root = _scratch_root(config)
    summary.scratch_dir = str(scratch_root)
    write_run_summary(summary, config.logs_dir)
    budget = TimeBudget(config.time_budget_s, workers=config.workers, task_timeout_s=config.task_timeout_s)

    def finished(record: TaskRecord) -> None:
        summary.add(record)
        write_run_summary(summary, config.logs_dir)
        progress.task_finished(record)

    batch = BatchRun(config, scratch_root, budget, progress, finished, solver, facts=facts,
                     run_id=summary.run_id)
    runner = executor or LocalExecutor()
    # A fork server the caller already runs is shared (its owner closes it); else one is made here
    # and started on this thread, which lives as long as the batch (the zygote dies with it), once
    # the first task's model has answered (`prestart_fork_server`): its imports then overlap model
    # turns instead of slowing the first briefs (a run that comes first starts it itself).
    warm = config.warm_runs and isinstance(runner, LocalExecutor) and bool(todo)
    shared = current_fork_server() if warm else None
    server = shared or (ForkServer(preload=SOLVER_PRELOAD) if warm else None)
    runs_before = server.runs_started if server is not None else 0
    progress.start(len(todo), len(done))
    try:
        with use_fork_server(server):
            await runner.run(todo, batch)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM, cancelled): runs still going in worker threads end now,
        # instead of holding the process until their own timeouts.
        stop_all_runs()
        if config.removes_scratch:
            # A task prepared ahead in a worker thread may still be writing here (making folders
            # again) while this unwinds, so the removal below can leave some behind: remove the
            # folder once more at exit, after the interpreter has joined those threads.
            atexit.register(shutil.rmtree, scratch_root, True)
        raise
    finally:
        summary.sandbox = _sandbox_record(server, config.warm_runs, runs_before)
        if server is not None and server is not shared:
            server.close()
        progress.close()
        summary.finish(time.monotonic() - started)
        write_run_summary(summary, config.logs_dir)
        if config.removes_scratch:
            shutil.rmtree(scratch_root, ignore_errors=True)
    return summary


async def _preflight(config: RunConfig, facts: ServerFacts, progress: Progress, *,
                     warm: bool) -> dict[str, object] | None:
    """Check the model endpoint once before the first task; EndpointUnusable ends the run here.
    Nothing to check when the answers come in-process (`settings.transport`: replay's recordings).

    When it answered and the Solver is the agent's (`warm`), the agent's warm-up follows: its rules
    and tool schemas once, so a server's prompt cache holds them before the first task's clock
    starts and the shared facts know the server's prefill rate (`agent.warm_up`)."""
    if config.settings.transport is not None:
        return None
    async with LLMClient(config.settings, facts=facts) as client:
        check = await check_endpoint(client, wait_s=config.preflight_wait_s, on_wait=progress.note)
        warmed = await warm_up(client, config.limits or Limits()) if warm and check.answered else None
    if check.note:
        progress.note(check.note)
    record = check.as_dict()
    if warmed is not None:
        record["warm_up"] = warmed.as_dict()
    return record


def _sandbox_record(server: ForkServer | None, wanted: bool, runs_before: int = 0) -> dict[str, object]:
    """What the summary says of how this batch's solver.py runs were started."""
    if server is None:
        return {"fork_server": "off" if not wanted else "not used (this executor or no task)", "warm_runs": 0}
    return {"fork_server": server.failure or "on", "warm_runs": server.runs_started - runs_before}


def run_batch_sync(
    config: RunConfig, *, progress: Progress | None = None, solver: TaskSolver = solve_task,
    executor: Executor | None = None,
) -> RunSummary:
    """`run_batch` from synchronous code, on a fresh event loop with a pool sized for the workers."""

    async def main() -> RunSummary:
        pool = ThreadPoolExecutor(max_workers=config.workers * _THREADS_PER_WORKER + _SPARE_THREADS,
                                  thread_name_prefix="datasolver")
        asyncio.get_running_loop().set_default_executor(pool)
        return await run_batch(config, progress=progress, solver=solver, executor=executor)

    return asyncio.run(main())


def _discover(config: RunConfig) -> tuple[list[Task], RunSummary]:
    """Selected tasks and a fresh summary; folders are checked, and nothing is written yet."""
    try:
        found = discover_tasks(config.input_dir)
    except DataError as exc:
        raise InputError(f"{exc}; give the folder that holds the task_* folders") from exc
    if not found.tasks and not found.errors:
        raise InputError(f"no task_* folder with a task.json in {config.input_dir}")
    tasks = select_tasks(found.tasks, config.task_ids)
    folders = [config.output_dir, config.logs_dir] + ([config.scratch_dir] if config.scratch_dir else [])
    check_folders(config.input_dir, *folders)
    summary = RunSummary(
        input_dir=str(config.input_dir), output_dir=str(config.output_dir), logs_dir=str(config.logs_dir),
        model=config.settings.model, workers=config.workers, task_timeout_s=config.task_timeout_s,
        time_budget_s=config.time_budget_s, settings=config.settings_record(),
        run_id=new_run_id(after=(run_ids(config.logs_dir) or [None])[-1]),
    )
    if not config.task_ids:  # a malformed folder matters only when the whole input is run
        summary.discovery_errors = [{"folder": str(path), "reason": reason} for path, reason in found.errors]
    return tasks, summary


def _make_folders(config: RunConfig) -> None:
    """The output and logs folders, once the run is sure to start."""
    for folder in (config.output_dir, config.logs_dir):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create {folder}: {exc}") from exc


def _scratch_root(config: RunConfig) -> Path:
    """The run's scratch root: `config.scratch_dir`, else a temporary folder made here."""
    if config.scratch_dir is not None:
        try:
            config.scratch_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create scratch folder {config.scratch_dir}: {exc}") from exc
        return config.scratch_dir
    return Path(tempfile.mkdtemp(prefix="datasolver-scratch-"))
