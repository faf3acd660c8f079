"""The solver tools' registry: SOLVER_TOOLS is the whole list; each tool's own settings (a hint
after errors, run_solver's timeout grace and cap) sit on its entry."""

from __future__ import annotations

from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.edit_solver import edit_solver
from datasolver.solver.tools.explore_data import explore_data, explore_hint
from datasolver.solver.tools.read_solver import read_solver
from datasolver.solver.tools.run_solver import SANDBOX_GRACE_S, cap_timeout, run_solver
from datasolver.toolkit import Tool

SOLVER_TOOLS: tuple[Tool[ToolContext], ...] = (
    Tool(explore_data, hint=explore_hint),
    Tool(read_solver),
    Tool(edit_solver),
    Tool(run_solver, timeout_grace_s=SANDBOX_GRACE_S, prepare=cap_timeout),
)


def tool_schemas() -> list[dict]:
    """OpenAI function-calling entries for the four tools, in registry order."""
    return [tool.schema() for tool in SOLVER_TOOLS]
