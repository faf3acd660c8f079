"""The pipeline's own fallback: run whatever solver.py the task's workdir holds, with no model.

Used when the agent could not run its own fallback (it raised, or was stopped past its deadline)
and for tasks the time budget reaches too late for any model request.
"""

from __future__ import annotations

from pathlib import Path

from datasolver.pipeline.config import FALLBACK_TIMEOUT_S
from datasolver.sandbox import SandboxLimits
from datasolver.solver import rerun_solver


def run_fallback(task_scratch_dir: Path, output_dir: Path, timeout_s: float = FALLBACK_TIMEOUT_S) -> tuple[Path | None, str]:
    """(prediction path or None, what happened). Blocking; never raises for a failed run."""
    run, path = rerun_solver(task_scratch_dir, output_dir, SandboxLimits(timeout_s=timeout_s))
    if path is not None:
        return path, "fallback run of the current solver.py wrote a prediction"
    detail = run.error.splitlines()[0] if run.error else "result is still None"
    return None, f"fallback run: {run.status} ({detail})"
