"""The four solver tools and their dispatcher. SOLVER_TOOLS is the whole registry."""

from __future__ import annotations

from datasolver.solver.tools.base import ResultKind, SolverTool, ToolContext, ToolResult
from datasolver.solver.tools.edit_solver import EditSolverArgs, edit_solver
from datasolver.solver.tools.explore_data import ExploreDataArgs, explore_data
from datasolver.solver.tools.read_solver import ReadSolverArgs, read_solver
from datasolver.solver.tools.run_solver import RunSolverArgs, run_solver
from datasolver.solver.tools.toolbox import SolverToolbox

SOLVER_TOOLS: tuple[SolverTool, ...] = (
    SolverTool("explore_data", explore_data, ExploreDataArgs),
    SolverTool("read_solver", read_solver, ReadSolverArgs),
    SolverTool("edit_solver", edit_solver, EditSolverArgs),
    SolverTool("run_solver", run_solver, RunSolverArgs),
)


def tool_schemas() -> list[dict]:
    """OpenAI function-calling entries for the four tools, in registry order."""
    return [tool.schema() for tool in SOLVER_TOOLS]


__all__ = [
    "SOLVER_TOOLS",
    "EditSolverArgs",
    "ExploreDataArgs",
    "ReadSolverArgs",
    "ResultKind",
    "RunSolverArgs",
    "SolverTool",
    "SolverToolbox",
    "ToolContext",
    "ToolResult",
    "tool_schemas",
]
