"""The pipeline room: one task end to end (`run_task`) and a batch of them (`run_batch`) with
concurrency, per-task deadlines, a global time budget, resume, progress and each run's summary
(`run_summary-<run id>.json`, and `run_summary.json` for the latest).

Wiring happens in one place: `task.run_task` (prepare → documents → agent → fallback) and
`batch.run_batch` (discovery, resume, semaphore, budget, summary). See docs/pipeline.md.
"""

from datasolver.pipeline.batch import run_batch_sync
from datasolver.pipeline.config import (
    DEFAULT_TASK_TIMEOUT_S,
    DEFAULT_WORKERS,
    RunConfig,
    default_input_dir,
    default_logs_dir,
    default_output_dir,
)
from datasolver.pipeline.demo import run_demo
from datasolver.pipeline.documents import prepare_task_documents
from datasolver.pipeline.progress import make_progress
from datasolver.pipeline.summary import RunSummary
from datasolver.pipeline.votes import VotePolicy

__all__ = [
    "default_input_dir",
    "default_logs_dir",
    "default_output_dir",
    "DEFAULT_TASK_TIMEOUT_S",
    "DEFAULT_WORKERS",
    "make_progress",
    "prepare_task_documents",
    "run_batch_sync",
    "run_demo",
    "RunConfig",
    "RunSummary",
    "VotePolicy",
]
