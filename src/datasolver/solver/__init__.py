"""The solver room: the solver.py scaffold, the four solver tools, and runs of solver.py (through datasolver.sandbox)."""

from datasolver.solver.prepare import prepare_scratch, restore_scaffold, write_scaffold
from datasolver.solver.publish import STATUSES, TaskStatus, has_prediction, prediction_path, publish_prediction
from datasolver.solver.run_report import render_run
from datasolver.solver.runner import SOLVER_PRELOAD
from datasolver.solver.solve import rerun_solver, run_fallback
from datasolver.solver.tools import SolverToolbox, tool_schemas

__all__ = [
    "SOLVER_PRELOAD",
    "STATUSES",
    "SolverToolbox",
    "TaskStatus",
    "has_prediction",
    "prediction_path",
    "publish_prediction",
    "render_run",
    "rerun_solver",
    "prepare_scratch",
    "restore_scaffold",
    "run_fallback",
    "tool_schemas",
    "write_scaffold",
]
