"""Re-run a prepared task's solver.py (no model) and publish its prediction."""

from __future__ import annotations

from pathlib import Path

from datasolver.sandbox import SandboxLimits
from datasolver.data.layout import ScratchLayout
from datasolver.solver.publish import publish_prediction
from datasolver.solver.runner import SolverRun, run_solver_script


def rerun_solver(
    task_scratch_dir: Path, output_root: Path | None = None, limits: SandboxLimits = SandboxLimits()
) -> tuple[SolverRun, Path | None]:
    """Run solver.py; when OK and `output_root` is given, publish the prediction to
    `<output_root>/<task_id>/prediction.csv`. Returns the run and the prediction's final path.
    """
    layout = ScratchLayout.of(task_scratch_dir).require()
    run = run_solver_script(layout, limits)
    if run.status != "OK" or run.prediction is None:
        return run, None
    if output_root is None:
        return run, run.prediction
    return run, publish_prediction(run.prediction, output_root, layout.root.name)
