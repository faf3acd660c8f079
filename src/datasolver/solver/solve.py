"""Replay a finished task: run its solver.py (no LLM) and copy prediction.csv to an output folder."""

from __future__ import annotations

import shutil
from pathlib import Path

from datasolver.solver.layout import ScratchLayout
from datasolver.solver.runner import SolverRun, run_solver_script
from datasolver.solver.sandbox import SandboxLimits


def solve_task(
    task_scratch_dir: Path, output_root: Path | None = None, limits: SandboxLimits = SandboxLimits()
) -> tuple[SolverRun, Path | None]:
    """Run solver.py; when OK and `output_root` is given, copy the prediction to
    `<output_root>/<task_id>/prediction.csv`. Returns the run and the prediction's final path.
    """
    layout = ScratchLayout.of(task_scratch_dir).require()
    run = run_solver_script(layout, limits)
    if run.status != "OK" or run.prediction is None:
        return run, None
    if output_root is None:
        return run, run.prediction
    target = Path(output_root) / layout.root.name / "prediction.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run.prediction, target)
    return run, target
