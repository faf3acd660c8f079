"""The solver tools' registry: SOLVER_TOOLS is the whole list, each entry a description of its
tool (run_solver's timeout grace and cap, and that it submits the answer); SOLVER_HOOKS is how the
agent's loop reacts around each of their calls (the two callbacks of `toolkit.CallHooks`), so a
loop names no tool and a tool record holds no loop reaction. A new tool: its module, and its line
here."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datasolver.sandbox.fork_server import prestart_fork_server
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.edit_solver import edit_brief, edit_solver
from datasolver.solver.tools.explore_data import explore_brief, explore_data
from datasolver.solver.tools.read_solver import read_solver
from datasolver.solver.tools.run_solver import SANDBOX_GRACE_S, cap_timeout, run_solver
from datasolver.toolkit import CallHooks, Tool, ToolCall, ToolOutcome

SOLVER_TOOLS: tuple[Tool[ToolContext], ...] = (
    Tool(explore_data),
    Tool(read_solver),
    Tool(edit_solver),
    Tool(run_solver, timeout_grace_s=SANDBOX_GRACE_S, prepare=cap_timeout, submits=True),
)


@dataclass(frozen=True)
class _Reading:
    """How the loop reads one tool's outcomes."""

    on_repeat: str  # what to change when the same error comes back word for word
    clip_note: str = ""  # how to see the rest of a result cut to fit the history ("": the general note)
    brief: Callable[[dict[str, Any]], str | None] | None = None  # the call in a summary of older turns
    superseded: bool = False  # a summary shows what the call read anyway (the current solver.py): left out


_READINGS: dict[Callable[..., Any], _Reading] = {
    explore_data: _Reading("change the SQL: check table and column names with `\\schema <table>` and quote "
                           "names with spaces or Chinese characters in double quotes", brief=explore_brief),
    # Summaries of older turns show the current solver.py, so its reads and its edits' code are not repeated.
    read_solver: _Reading("change the arguments", clip_note="read on with read_solver's offset", superseded=True),
    edit_solver: _Reading("call read_solver for the current line numbers and hashes, then edit with those",
                          brief=edit_brief),
    run_solver: _Reading("change the code in solver.py (edit_solver) before running it again"),
}


def before_call(tool: Tool[Any] | None, call: ToolCall) -> None:
    """A model's call is about to run: solver.py runs are near, so the batch's fork server starts now
    (once), on the batch's thread, overlapping model turns rather than the first tasks' briefs."""
    prestart_fork_server()


def after_call(tool: Tool[Any] | None, call: ToolCall, outcome: ToolOutcome) -> None:
    """How the loop reads this tool's outcome: what to change when its error repeats, how a cut
    result reads on, how the call reads in a summary of older turns."""
    reading = _READINGS.get(tool.function) if tool is not None else None
    if reading is None:
        return
    outcome.on_repeat = reading.on_repeat
    if reading.clip_note:
        outcome.clip_note = reading.clip_note
    args = _raw_arguments(call)
    if reading.superseded:
        outcome.brief = ""
    elif reading.brief is not None and args is not None:
        outcome.brief = reading.brief(args)


def _raw_arguments(call: ToolCall) -> dict[str, Any] | None:
    """The arguments as the model sent them (a summary shows what was asked, even when it was
    refused); None when they are no JSON object."""
    try:
        args = json.loads(call.arguments_raw)
    except (TypeError, ValueError):
        return None
    return args if isinstance(args, dict) else None


SOLVER_HOOKS = CallHooks(before_call, after_call)
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


def sent_query(call: ToolCall) -> str | None:
    """The SQL query a call sends to the data (explore_data's `query`; a `\\` command is no query),
    or None: the loop answers a query sent before from what it returned then."""
    if call.name != explore_data.__name__:
        return None
    args = _raw_arguments(call)
    query = args.get("query") if args is not None else None
    if not isinstance(query, str) or not query.strip() or query.lstrip().startswith("\\"):
        return None
    return query


def tool_schemas() -> list[dict]:
    """OpenAI function-calling entries for the four tools, in registry order."""
    return [tool.schema() for tool in SOLVER_TOOLS]
