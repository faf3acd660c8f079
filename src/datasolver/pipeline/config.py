"""Run settings as plain data, their defaults, and where the folders default to.

Folders: INPUT_DIR / OUTPUT_DIR from the environment, else `/input` and `/output` (the competition
container runs `datasolver run` with no arguments). Logs: LOGS_DIR, else `/logs` when it exists and
is writable (the container), else `<OUTPUT_DIR>-logs` beside the output folder, so two runs into
two output folders never share traces and the output folder holds predictions only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.llm import LLMSettings
from datasolver.llm.constants import PREFLIGHT_WAIT_S
from datasolver.pipeline.errors import OutputError, RunConfigError
from datasolver.pipeline.votes import VotePolicy
from datasolver.run_logs import LATEST_SUMMARY
from datasolver.settings import REQUIRED, check_settings, count, seconds, setting, switch

if TYPE_CHECKING:
    from datasolver.agent import Limits

ENV_INPUT_DIR = "INPUT_DIR"
ENV_OUTPUT_DIR = "OUTPUT_DIR"
ENV_LOGS_DIR = "LOGS_DIR"
CONTAINER_INPUT = Path("/input")
CONTAINER_OUTPUT = Path("/output")
CONTAINER_LOGS = Path("/logs")
LOGS_SUFFIX = "-logs"

# Concurrency is bounded by the model endpoint, not by CPUs: workers mostly wait on requests.
DEFAULT_WORKERS = 8
# The hidden set is ~380 tasks in 12 h: 8 workers give each task ~15 minutes on average.
DEFAULT_TASK_TIMEOUT_S = 900.0
# Fast path (the time budget runs short): one attempt with fewer requests.
FAST_MAX_ATTEMPTS = 1
FAST_MAX_REQUESTS = 30
# With less budget than this left, a task gets only the fallback run (no model request).
MIN_LLM_SECONDS = 20.0
# Past its deadline the agent may still finish a tool call and run its fallback (each up to its
# tool timeout); only after that plus this margin do we cancel it and run our own fallback.
HARD_STOP_MARGIN_S = 30.0
# The pipeline's own fallback run of solver.py (after an exception or a hard stop).
FALLBACK_TIMEOUT_S = 60.0
# The documents and video passes (prepare stage) may use at most this share of a task's deadline
# together; what they use is taken off the deadline of the model's part.
PREPARE_SHARE = 0.4
SUMMARY_FILE = LATEST_SUMMARY  # the latest run's summary; each run's own is run_summary-<run id>.json


@dataclass(frozen=True)
class RunConfig:
    """Everything one batch run needs. `limits` (agent Limits) defaults to the agent's own."""

    input_dir: Path = setting(REQUIRED, "the folder of task folders (read only)")
    output_dir: Path = setting(REQUIRED, "predictions go to `<output_dir>/<task_id>/prediction.csv`")
    logs_dir: Path = setting(REQUIRED, "traces and the run summaries (each run's own, and the latest's copy)")
    settings: LLMSettings = setting(REQUIRED, "the model endpoint and its call policy")
    workers: int = count(DEFAULT_WORKERS, "tasks at once (bounded by the model endpoint, not by CPUs)")
    task_timeout_s: float = seconds(DEFAULT_TASK_TIMEOUT_S, "one task's deadline, seconds")
    time_budget_s: float | None = seconds(None, "the whole run's seconds; tasks past it get the fast path, then "
                                          "the fallback only; None: no budget", optional=True)
    task_ids: tuple[str, ...] | None = setting(None, "only these tasks; None: every task of the input folder")
    force: bool = switch(False, "solve again tasks that already have a prediction")
    scratch_dir: Path | None = setting(None, "None: a fresh temporary folder, each task's part deleted when it "
                                       "ends (unless keep_scratch)")
    keep_scratch: bool = switch(False, "keep each task's scratch folder")
    doc_llm: bool = switch(True, "let the document room ask the model to structure narrative documents")
    limits: Limits | None = setting(None, "the agent's budgets per task; None: the agent's defaults")
    votes: VotePolicy = setting(doc="independent solves per task and the temperature of all but the first",
                                factory=VotePolicy)
    warm_runs: bool = switch(True, "local executor: fork sandboxed solver.py runs from a per-batch fork server "
                             "(pandas, duckdb and datasolver.data already imported) instead of a fresh interpreter "
                             "each; cold when it is unusable")
    preflight_wait_s: float = seconds(PREFLIGHT_WAIT_S, "before the first task, how long to wait for a model "
                                      "server that cannot be reached yet (it may be starting); then the run "
                                      "stops with an error")

    def __post_init__(self) -> None:
        check_settings(self, RunConfigError)

    @property
    def removes_scratch(self) -> bool:
        """Each task's scratch copy is deleted when it ends: the run made the folder (no `scratch_dir`)
        and was not asked to keep it."""
        return self.scratch_dir is None and not self.keep_scratch

    def settings_record(self) -> dict[str, object]:
        """What run_summary.json keeps of the settings: enough to replay and report the run.
        Never the endpoint URL (it may carry credentials) nor the key."""
        llm = self.settings
        return {
            "model": llm.model, "temperature": llm.temperature, "max_retries": llm.max_retries,
            "enable_thinking": llm.enable_thinking, "read_timeout_s": llm.read_timeout,
            "doc_llm": self.doc_llm, "max_attempts": self.limits.max_attempts if self.limits else None,
            # The Solver's switches that decide which requests are sent (a replay must send the same).
            "direct_answer": self.limits.direct_answer if self.limits else None,
            "hold_flagged": self.limits.hold_flagged if self.limits else None,
            "stall_rounds": self.limits.stall_rounds if self.limits else None,
            "schema_format": self.limits.schema_format if self.limits else None,
            "workers": self.workers, "task_timeout_s": self.task_timeout_s, "time_budget_s": self.time_budget_s,
        }


def default_input_dir() -> Path:
    """$INPUT_DIR, else /input."""
    return Path(os.environ.get(ENV_INPUT_DIR) or CONTAINER_INPUT)


def default_output_dir() -> Path:
    """$OUTPUT_DIR, else /output."""
    return Path(os.environ.get(ENV_OUTPUT_DIR) or CONTAINER_OUTPUT)


def default_logs_dir(output_dir: Path) -> Path:
    """$LOGS_DIR, else /logs when it is a writable folder, else `<output_dir>-logs`."""
    if os.environ.get(ENV_LOGS_DIR):
        return Path(os.environ[ENV_LOGS_DIR])
    if CONTAINER_LOGS.is_dir() and os.access(CONTAINER_LOGS, os.W_OK | os.X_OK):
        return CONTAINER_LOGS
    output_dir = Path(output_dir).absolute()
    return output_dir.with_name(output_dir.name + LOGS_SUFFIX)


def check_folders(input_dir: Path, *others: Path) -> None:
    """Raise OutputError when a folder we write is the input folder or lies inside it."""
    source = Path(input_dir).resolve()
    for folder in others:
        target = Path(folder).resolve()
        if target == source or source in target.parents:
            raise OutputError(
                f"{folder} is inside the input folder {input_dir}; the input is never written, "
                "choose an output, logs and scratch folder outside it"
            )
