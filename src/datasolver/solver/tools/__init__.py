"""The four solver tools and their toolbox. SOLVER_TOOLS is the whole registry; each tool's own
settings (a hint after errors, run_solver's timeout grace and cap) sit on its entry."""

from __future__ import annotations

from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.edit_solver import edit_solver
from datasolver.solver.tools.explore_data import explore_data, explore_hint
from datasolver.solver.tools.read_solver import read_solver
from datasolver.solver.tools.run_solver import SANDBOX_GRACE_S, cap_timeout, run_solver
from datasolver.solver.tools.toolbox import SolverToolbox
from datasolver.toolkit import ResultKind, Tool, ToolResult

SOLVER_TOOLS: tuple[Tool[ToolContext], ...] = (
    Tool(explore_data, hint=explore_hint),
    Tool(read_solver),
    Tool(edit_solver),
    Tool(run_solver, timeout_grace_s=SANDBOX_GRACE_S, prepare=cap_timeout),
)


def tool_schemas() -> list[dict]:
    """OpenAI function-calling entries for the four tools, in registry order."""
    return [tool.schema() for tool in SOLVER_TOOLS]


__all__ = [
    "SOLVER_TOOLS",
    "ResultKind",
    "SolverToolbox",
    "Tool",
    "ToolContext",
    "ToolResult",
    "tool_schemas",
]
