"""The solver room: the solver.py scaffold, the four solver tools, and runs of solver.py (through datasolver.sandbox)."""

from datasolver.data.errors import ScratchError  # raised by prepare_task and the tools on an unprepared folder
from datasolver.solver.errors import ScaffoldError, SolverError, UnknownTool
from datasolver.solver.prepare import prepare_scratch, prepare_task, restore_scaffold, write_scaffold
from datasolver.solver.publish import STATUSES, TaskStatus, has_prediction, prediction_path, publish_prediction
from datasolver.solver.run_report import render_run
from datasolver.solver.runner import SOLVER_PRELOAD, SolverRun, run_solver_script
from datasolver.solver.scaffold import NO_RESULT_MARKER, RESULT_LINE
from datasolver.solver.solve import FallbackRun, rerun_solver, run_fallback
from datasolver.solver.tools import SOLVER_TOOLS, SolverToolbox, ToolResult, tool_schemas

__all__ = [
    "NO_RESULT_MARKER",
    "RESULT_LINE",
    "SOLVER_PRELOAD",
    "SOLVER_TOOLS",
    "STATUSES",
    "FallbackRun",
    "ScaffoldError",
    "ScratchError",
    "SolverError",
    "SolverRun",
    "SolverToolbox",
    "TaskStatus",
    "ToolResult",
    "UnknownTool",
    "has_prediction",
    "prediction_path",
    "publish_prediction",
    "render_run",
    "rerun_solver",
    "prepare_scratch",
    "prepare_task",
    "restore_scaffold",
    "run_fallback",
    "run_solver_script",
    "tool_schemas",
    "write_scaffold",
]
