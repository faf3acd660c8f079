"""An attempt starts from what the earlier ones learnt (tables looked at, the latest query with
rows, the errors met), in a few lines after the unchanged first message."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent import Limits
from tests.helpers.agent import solve_at_transport
from datasolver.llm.fake import text, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import PAPER_SQL, make_paper_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_the_second_attempt_opens_with_what_the_first_learnt(tmp_path: Path) -> None:
    scratch = prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")
    script = [
        tool_call("explore_data", {"query": "SELECT title FROM Result"}),
        tool_call("explore_data", {"query": "\\schema paper"}),
        tool_call("explore_data", {"query": "SELECT title, year FROM paper WHERE year = 2020"}),
        tool_call("run_solver", {}),
        text("The titles are listed above."), text("Done."),  # sent back once, then the attempt ends
        tool_call("edit_solver", {"sql": PAPER_SQL}), tool_call("run_solver", {}), text("Done."),
    ]
    outcome, server, _ = solve_at_transport(scratch, script, limits=Limits(max_attempts=2))
    assert outcome.status == "solved" and outcome.attempts == 2
    first, second = [r["messages"] for r in server.requests if len(r["messages"]) == 2]
    assert second[0] == first[0]  # the rules (system message) are unchanged
    assert second[1]["content"].startswith(first[1]["content"])  # the first message is the prefix
    added = second[1]["content"][len(first[1]["content"]):]
    assert "What earlier attempts of this task learnt" in added
    assert "- tables looked at without error: paper\n" in added  # `Result` failed: not a table seen
    assert "- the latest query that returned rows: SELECT title, year FROM paper WHERE year = 2020" in added
    errors = next(line for line in added.splitlines() if line.startswith("- errors met"))
    assert "explore_data: " in errors and "Result" in errors
    assert "run_solver: NO OUTPUT (solver.py still answered `result = None`" in errors


def test_nothing_learnt_adds_no_note(tmp_path: Path) -> None:
    scratch = prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")
    _, server, _ = solve_at_transport(scratch, handler=lambda request: text("Paris."), limits=Limits(max_attempts=2))
    openings = [r["messages"][1]["content"] for r in server.requests if len(r["messages"]) == 2]
    assert len(openings) == 2 and "learnt" not in openings[1] and "(This is attempt 2." in openings[1]
