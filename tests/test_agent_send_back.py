"""Send-back: a model that stops while its latest run has failed answer checks is told once, in
the same attempt, with the CHECK lines; after that its answer is accepted as it is."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from datasolver.agent import Limits, solve_task
from datasolver.agent.solve import SolveOutcome
from tests.helpers.agent import edit_query_turn, fake_client, query_line, task_run
from datasolver.llm import TraceWriter
from datasolver.llm.fake import ScriptedModel, text, tool_call
from datasolver.solver.prepare import prepare_task
from datasolver.solver.hashline import line_hash
from tests.helpers.solver import make_tiny_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

ECHO = 'result = run_sql("SELECT city, amount FROM orders WHERE city = \'Paris\' ORDER BY amount")'
FIXED = 'result = run_sql("SELECT amount FROM orders WHERE city = \'Paris\' ORDER BY amount")'


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script) -> tuple[SolveOutcome, ScriptedModel, list[dict]]:
    trace = TraceWriter(scratch.parent.parent / "logs", scratch.name)
    with ScriptedModel(script) as server:
        async def go() -> SolveOutcome:
            async with fake_client(server, trace) as client:
                return await solve_task(task_run(scratch, client, scratch.parent.parent / "out", Limits(max_attempts=1)))

        outcome = asyncio.run(go())
    assert server.errors == []
    return outcome, server, trace.read()


def published(scratch: Path) -> str:
    return (scratch.parent.parent / "out" / scratch.name / "prediction.csv").read_text(encoding="utf-8")


def test_sent_back_once_with_the_check_lines_then_corrected(scratch: Path) -> None:
    number, _ = query_line(scratch)
    fix = tool_call("edit_solver", {"start_line": number, "start_hash": line_hash(ECHO), "new_content": FIXED})
    script = [edit_query_turn(scratch, ECHO), tool_call("run_solver", {}), text("Done."),
              fix, tool_call("run_solver", {}), text("Done, fixed.")]
    outcome, server, events = solve(scratch, script)
    assert (outcome.status, outcome.requests) == ("solved", 6)
    assert published(scratch) == "amount\n7.0\n10.5\n"
    sent = server.requests[3]["messages"][-1]
    assert sent["role"] == "user"
    assert "\nCHECK constant_column: column 'city' is 'Paris' in all 2 row(s)" in sent["content"]
    [send_back] = [e for e in events if e["event"] == "send_back"]
    assert send_back["checks"] == ["constant_column"]
    assert [e["checks"] for e in events if e["event"] == "answer_checks"] == [["constant_column"], []]
    assert outcome.attempt_results[0].checks_sent_back == 1


def test_after_one_send_back_the_answer_is_accepted_as_it_is(scratch: Path) -> None:
    script = [edit_query_turn(scratch, ECHO), tool_call("run_solver", {}), text("Done."), text("It is right.")]
    outcome, server, events = solve(scratch, script)
    assert (outcome.status, outcome.requests) == ("solved", 4)
    assert published(scratch) == "city,amount\nParis,7.0\nParis,10.5\n"
    assert [e["event"] for e in events].count("send_back") == 1


def test_a_clean_run_and_an_informs_only_check_are_not_sent_back(scratch: Path) -> None:
    tie = 'result = run_sql("SELECT city FROM cities ORDER BY country LIMIT 1")'
    script = [edit_query_turn(scratch, tie), tool_call("run_solver", {}), text("Done.")]
    outcome, server, events = solve(scratch, script)
    assert (outcome.status, outcome.requests) == ("solved", 3)
    [checked] = [e for e in events if e["event"] == "answer_checks"]
    assert (checked["checks"], checked["blocking"]) == (["ties_cut"], [])
    assert "CHECK ties_cut: " in checked["lines"][0]
    assert not [e for e in events if e["event"] == "send_back"]
