"""The four solver tools (registry.py) and their toolbox (toolbox.py)."""

from __future__ import annotations

from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.registry import (
    SOLVER_HOOKS, SOLVER_TOOLS, WrittenQueryCalls, sent_query, tool_schemas, written_query_calls,
)
from datasolver.solver.tools.offer import FOUND_NOTHING, OfferedRewrite, RewriteOffers, last_query
from datasolver.solver.tools.toolbox import SolverToolbox
from datasolver.toolkit import ResultKind, Tool, ToolResult

__all__ = [
    "FOUND_NOTHING",
    "OfferedRewrite",
    "RewriteOffers",
    "SOLVER_HOOKS",
    "SOLVER_TOOLS",
    "ResultKind",
    "SolverToolbox",
    "Tool",
    "ToolContext",
    "ToolResult",
    "WrittenQueryCalls",
    "last_query",
    "sent_query",
    "tool_schemas",
    "written_query_calls",
]
