"""The pipeline room: one task end to end (`run_task`) and a batch of them (`run_batch`) with
concurrency, per-task deadlines, a global time budget, resume, progress and each run's summary
(`run_summary-<run id>.json`, and `run_summary.json` for the latest).

Wiring happens in one place: `task.run_task` (prepare → documents → agent → fallback) and
`batch.run_batch` (discovery, resume, semaphore, budget, summary). See docs/pipeline.md.
"""

from datasolver.pipeline.batch import run_batch, run_batch_sync, select_tasks
from datasolver.pipeline.budget import TaskPlan, TimeBudget
from datasolver.pipeline.config import (
    DEFAULT_TASK_TIMEOUT_S,
    DEFAULT_WORKERS,
    SUMMARY_FILE,
    RunConfig,
    default_input_dir,
    default_logs_dir,
    default_output_dir,
)
from datasolver.pipeline.demo import DemoResult, run_demo
from datasolver.pipeline.documents import prepare_task_documents, prepare_task_documents_async
from datasolver.pipeline.errors import InputError, OutputError, PipelineError, RunConfigError, UnknownTasks
from datasolver.pipeline.progress import LogProgress, NullProgress, Progress, RichProgress, make_progress
from datasolver.pipeline.resume import split_for_resume
from datasolver.pipeline.summary import RunSummary, TaskRecord, load_summary, write_run_summary, write_summary
from datasolver.pipeline.task import (
    PreparedTask,
    TaskSetup,
    planned,
    prepare_stage,
    run_task,
    solve_stage,
    task_limits,
)
from datasolver.pipeline.votes import VoteOutcome, VotePolicy, solve_by_vote

__all__ = [
    "prepare_task_documents",
    "prepare_task_documents_async",
    "DEFAULT_TASK_TIMEOUT_S",
    "DEFAULT_WORKERS",
    "SUMMARY_FILE",
    "DemoResult",
    "InputError",
    "LogProgress",
    "NullProgress",
    "OutputError",
    "PipelineError",
    "RunConfigError",
    "PreparedTask",
    "Progress",
    "RichProgress",
    "RunConfig",
    "RunSummary",
    "TaskPlan",
    "TaskRecord",
    "TaskSetup",
    "TimeBudget",
    "UnknownTasks",
    "default_input_dir",
    "default_logs_dir",
    "default_output_dir",
    "load_summary",
    "make_progress",
    "prepare_stage",
    "run_batch",
    "run_batch_sync",
    "run_demo",
    "planned",
    "run_task",
    "solve_by_vote",
    "VoteOutcome",
    "VotePolicy",
    "select_tasks",
    "solve_stage",
    "split_for_resume",
    "task_limits",
    "write_run_summary",
    "write_summary",
]
