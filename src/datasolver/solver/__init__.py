"""The solver room: the solver.py scaffold, the four solver tools, and sandboxed runs of solver.py."""

from datasolver.solver.errors import SandboxError, ScaffoldError, ScratchError, SolverError, UnknownTool
from datasolver.solver.layout import PREDICTION_NAME, ScratchLayout
from datasolver.solver.prepare import prepare_task, restore_scaffold, write_scaffold
from datasolver.solver.publish import STATUSES, TaskStatus, has_prediction, prediction_path, publish_prediction
from datasolver.solver.run_report import render_run
from datasolver.solver.runner import SolverRun, run_solver_script
from datasolver.solver.sandbox import GiB, SandboxLimits, SandboxRun, landlock_abi, run_sandboxed, stop_all_runs
from datasolver.solver.scaffold import NO_RESULT_MARKER, RESULT_LINE
from datasolver.solver.solve import rerun_solver
from datasolver.solver.tools import SOLVER_TOOLS, SolverToolbox, ToolResult, tool_schemas

__all__ = [
    "GiB",
    "NO_RESULT_MARKER",
    "PREDICTION_NAME",
    "RESULT_LINE",
    "SOLVER_TOOLS",
    "STATUSES",
    "SandboxError",
    "SandboxLimits",
    "SandboxRun",
    "ScaffoldError",
    "ScratchError",
    "ScratchLayout",
    "SolverError",
    "SolverRun",
    "SolverToolbox",
    "TaskStatus",
    "ToolResult",
    "UnknownTool",
    "has_prediction",
    "landlock_abi",
    "prediction_path",
    "publish_prediction",
    "render_run",
    "rerun_solver",
    "prepare_task",
    "restore_scaffold",
    "run_sandboxed",
    "stop_all_runs",
    "run_solver_script",
    "tool_schemas",
    "write_scaffold",
]
