"""The scripted model reads solver.py from what it knows: when compaction has cut its own
edit_solver call from the conversation, the query it wrote is recognised in solver.py (it runs
the solver rather than searching for a `result = None` line that is gone), and a read past the
end of the file starts again from the top instead of being repeated."""

from __future__ import annotations

import pytest

from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm.fake.turns import ToolCalls
from datasolver.solver.scaffold import query_code

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

SQL = "SELECT city, SUM(amount) AS total FROM orders GROUP BY city ORDER BY city"
QUESTION = "What is the total amount per city?"
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
         for n in ("explore_data", "read_solver", "edit_solver", "run_solver")]


def numbered(first: int, lines: list[str]) -> str:
    return "\n".join(f"{first + i}:AB|{line}" for i, line in enumerate(lines))


def request(*tail: tuple[str, dict, str]) -> dict:
    """A conversation whose tail is (tool name, arguments, result) exchanges."""
    messages: list[dict] = [{"role": "system", "content": "You solve data tasks."},
                            {"role": "user", "content": f"Task: {QUESTION}"}]
    for n, (name, args, result) in enumerate(tail):
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": str(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": result})
    return {"messages": messages, "tools": TOOLS}


def next_call(req: dict) -> tuple[str, dict]:
    turn = solver_handler([ScriptedAnswer("task_x", SQL, QUESTION)])(req)
    assert isinstance(turn, ToolCalls), turn
    call = turn.calls[0]
    return call.name, call.arguments


QUERY_AREA = ["# ==== QUERY AREA (edit here) ====", *query_code(SQL).split("\n"), "# ==== END OF QUERY AREA ===="]


def test_its_own_query_already_in_solver_py_means_the_edit_is_done_so_it_runs():
    # Compaction dropped the edit_solver exchange: only a later read shows the edited query area.
    req = request(("read_solver", {"offset": 38}, numbered(38, ["catalog = Catalog.open(TASK_DIR)", *QUERY_AREA])))
    assert next_call(req) == ("run_solver", {})


def test_a_read_past_the_end_is_not_repeated():
    req = request(
        ("read_solver", {"offset": 40}, numbered(40, ["x = 1", "", "# save block"])),
        ("read_solver", {"offset": 43}, "offset 43 is past the end: solver.py has 42 lines."),
    )
    name, args = next_call(req)
    assert name == "read_solver"
    assert args.get("offset", 1) <= 42


def test_the_result_line_is_still_edited_when_it_is_shown():
    req = request(("read_solver", {}, numbered(44, ["# ==== QUERY AREA (edit here) ====", "result = None"])))
    assert next_call(req) == ("edit_solver", {"start_line": 45, "start_hash": "AB", "new_content": query_code(SQL)})


def test_the_compaction_summary_view_counts_too():
    req = request(("read_solver", {"offset": 38}, numbered(38, ["x = 1", QUERY_AREA[0], QUERY_AREA[1]]) + "\n… (900 characters cut)"))
    req["messages"].insert(2, {"role": "user", "content": "# Progress so far\n\n## workdir/solver.py as it is now\n\n"
                               + numbered(40, QUERY_AREA)})
    assert next_call(req) == ("run_solver", {})
