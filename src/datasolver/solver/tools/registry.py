"""The solver tools' registry: SOLVER_TOOLS is the whole list; each tool's own settings (a hint
after errors, run_solver's timeout grace and cap, the loop's hooks) sit on its entry, so a loop
names no tool."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from datasolver.sandbox.fork_server import prestart_fork_server
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.edit_solver import edit_brief, edit_solver
from datasolver.solver.tools.explore_data import explore_brief, explore_data, explore_hint
from datasolver.solver.tools.read_solver import read_solver
from datasolver.solver.tools.run_solver import SANDBOX_GRACE_S, cap_timeout, run_solver
from datasolver.toolkit import Tool

SOLVER_TOOLS: tuple[Tool[ToolContext], ...] = (
    Tool(explore_data, hint=explore_hint, brief_args=explore_brief,
         repeat_hint="change the SQL: check table and column names with `\\schema <table>` and quote "
                     "names with spaces or Chinese characters in double quotes"),
    # Summaries of older turns show the current solver.py, so its reads and its edits' code are not repeated.
    Tool(read_solver, clip_hint="read on with read_solver's offset", repeat_hint="change the arguments",
         superseded=True),
    Tool(edit_solver, brief_args=edit_brief,
         repeat_hint="call read_solver for the current line numbers and hashes, then edit with those"),
    # solver.py runs go through the batch's fork server: started once a model has answered.
    Tool(run_solver, timeout_grace_s=SANDBOX_GRACE_S, prepare=cap_timeout, warm_up=prestart_fork_server,
         submits=True, repeat_hint="change the code in solver.py (edit_solver) before running it again"),
)
PROBE_ROWS = 5  # rows the explore_data test of a written query asks for


@dataclass(frozen=True)
class WrittenQueryCalls:
    """The calls that stand for a reply which wrote an SQL query instead of calling a tool: a test
    run of it, then, when it runs, the calls that put it into solver.py and run it."""

    probe: tuple[str, dict[str, Any]]
    adopt: tuple[tuple[str, dict[str, Any]], ...]


def written_query_calls(query: str) -> WrittenQueryCalls:
    """explore_data tests the query; edit_solver's `sql` puts it into solver.py; run_solver runs it."""
    return WrittenQueryCalls(("explore_data", {"query": query, "limit": PROBE_ROWS}),
                             (("edit_solver", {"sql": query}), ("run_solver", {})))


def tool_schemas() -> list[dict]:
    """OpenAI function-calling entries for the four tools, in registry order."""
    return [tool.schema() for tool in SOLVER_TOOLS]
