"""Re-run a prepared task's solver.py (no model) and publish its prediction; the fallback after
an agent that could not answer is one such run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver.data.layout import ScratchLayout
from datasolver.sandbox import SandboxLimits, safe_files
from datasolver.solver.publish import publish_prediction
from datasolver.solver.runner import SolverRun, run_solver_script


def rerun_solver(
    layout: ScratchLayout, output_root: Path | None = None, limits: SandboxLimits = SandboxLimits()
) -> tuple[SolverRun, Path | None]:
    """Run solver.py; when OK and `output_root` is given, publish the prediction to
    `<output_root>/<task_id>/prediction.csv`. Returns the run and the prediction's final path.
    """
    run = run_solver_script(layout, limits)
    if run.status != "OK" or run.prediction is None:
        return run, None
    if output_root is None:
        return run, run.prediction
    return run, publish_prediction(run.prediction, output_root, layout.root.name)


@dataclass(frozen=True)
class FallbackRun:
    """One model-free run of solver.py after an agent could not answer: what ran, the run, and
    the published prediction (None when it wrote none)."""

    source: str
    run: SolverRun
    prediction: Path | None

    @property
    def note(self) -> str:
        """One line for a task's reason."""
        if self.prediction is not None:
            return f"fallback ran {self.source}"
        return f"fallback run of {self.source}: {self.run.status} ({self.run.why_no_prediction})"


def run_fallback(layout: ScratchLayout, output_root: Path, limits: SandboxLimits, *, script: str | None = None,
                 source: str = "the current solver.py") -> FallbackRun:
    """The fallback after an agent (the agent's own, or the pipeline's when the agent raised or
    overstayed): write `script` (when given) into solver.py, run it once, publish when OK.
    Blocking; never raises for a failed run."""
    if script is not None:
        safe_files.write_atomic(layout.solver_py, script)
    run, path = rerun_solver(layout, output_root, limits)
    return FallbackRun(source, run, path)
