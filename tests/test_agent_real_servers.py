"""The agent against real-server behaviours (played by the scripted model at the client's
transport): prose replies sent back, attempts that differ, the token budget, a window too small,
text-calling servers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from datasolver.agent import Limits, solve_task
from datasolver.agent.solve import SolveOutcome
from tests.helpers.agent import edit_query_turn, fake_client, task_run
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import TraceWriter
from datasolver.llm.fake import ScriptedModel, text, text_writer, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import TINY_QUESTION, make_tiny_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

COUNT_BY_CITY = 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city")'
EXPECTED_CSV = "city,n\nParis,2\nLyon,1\nNice,1\n"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script=None, handler=None, limits: Limits = Limits(), server_options=None, **client_settings):
    trace = TraceWriter(scratch.parent.parent / "logs", "task_tiny")
    with ScriptedModel(script, handler, **(server_options or {})) as server:
        async def go() -> SolveOutcome:
            async with fake_client(server, trace, **client_settings) as client:
                return await solve_task(task_run(scratch, client, scratch.parent.parent / "out", limits))

        outcome = asyncio.run(go())
    assert server.errors == []
    return outcome, server, trace.read()


def assert_no_body_repeated_at_temperature_zero(bodies: list[dict]) -> None:
    """Sampled requests (relevance votes at 0.7) may repeat on purpose; greedy ones never should."""
    greedy = [json.dumps(b, sort_keys=True) for b in bodies if b.get("temperature") == 0]
    assert greedy and len(greedy) == len(set(greedy))


def test_a_prose_reply_with_sql_is_sent_back_once_naming_edit_solver(scratch: Path) -> None:
    # SQL inline in prose (no block to read it from) is not run for the model: it is sent back.
    script = [
        text("The answer is this query: SELECT city, count(*) FROM orders GROUP BY city."),
        edit_query_turn(scratch, COUNT_BY_CITY),
        tool_call("run_solver", {}),
        text("Done."),
    ]
    outcome, server, events = solve(scratch, script, limits=Limits(max_attempts=1))
    assert outcome.status == "solved" and outcome.prediction.read_text(encoding="utf-8") == EXPECTED_CSV
    sent_back = server.requests[1]["messages"][-1]
    assert sent_back["role"] == "user" and "edit_solver" in sent_back["content"] and "SQL" in sent_back["content"]
    assert [e["event"] for e in events].count("sent_back") == 1
    assert outcome.attempt_results[0].sent_back == 1


def test_prose_twice_ends_the_attempt_after_one_send_back(scratch: Path) -> None:
    outcome, server, _ = solve(scratch, [text("I think it is Paris."), text("Paris.")], limits=Limits(max_attempts=1))
    assert [a.ended for a in outcome.attempt_results] == ["answered"] and len(server.requests) == 2
    assert "```sql block" in server.requests[1]["messages"][-1]["content"]  # the one thing small models write


def test_attempts_differ_and_no_request_body_is_sent_twice(scratch: Path) -> None:
    outcome, server, events = solve(scratch, handler=lambda request: text("Paris."), limits=Limits(max_attempts=3))
    assert outcome.status == "failed" and outcome.attempts == 3
    bodies = [json.dumps(b, sort_keys=True) for b in server.requests]
    assert len(bodies) == 6 and len(set(bodies)) == 6
    openings = [b for b in server.requests if len(b["messages"]) == 2]
    assert [b["temperature"] for b in openings] == [0.0, 0.3, 0.6]
    assert "previous attempt ended" not in openings[0]["messages"][1]["content"]
    line = openings[1]["messages"][1]["content"].rsplit("\n", 1)[-1]
    assert line.startswith("(This is attempt 2. The previous attempt ended: it answered without") and "\n" not in line
    requests = [e for e in events if e["event"] == "request"]
    assert [e["attempt"] for e in requests] == [1, 1, 2, 2, 3, 3]  # the agent's attempt, not the HTTP try
    starts = [e["temperature"] for e in events if e["event"] == "attempt_start"]
    assert starts == [0.0, 0.3, 0.6]


def test_the_task_token_budget_ends_the_task_with_a_reason(scratch: Path) -> None:
    # A query with no rows: the must-submit fallback (last explore query that returned rows) stays out.
    script = [tool_call("explore_data", {"query": "SELECT 1 WHERE false"})] * 10
    outcome, server, _ = solve(scratch, script, limits=Limits(max_attempts=3, task_token_budget=5_000))
    assert outcome.status == "failed" and outcome.attempts == 1
    assert "token_budget" in outcome.reason and "of 5000 tokens" in outcome.reason
    assert outcome.usage["total_tokens"] >= 5_000 and len(server.requests) < 10


def test_a_window_smaller_than_the_task_prompt_ends_with_both_numbers(tmp_path: Path) -> None:
    # Attempt 1 learns the window from the 400 and cannot cut the task prompt; the prompt is refitted
    # (relevance votes, folded tables) for attempt 2, which still cannot fit: the task ends.
    task = make_tiny_task(tmp_path / "input")  # a knowledge.md long enough that the prompt is over the smallest budget
    notes = "".join(f"- Orders of shop {i} are counted once per order id.\n" for i in range(12))
    (task / "context" / "knowledge.md").write_text("amount is in euros.\n" + notes, encoding="utf-8")
    scratch = prepare_task(task, tmp_path / "scratch")
    outcome, server, events = solve(scratch, handler=lambda request: text("orders"), limits=Limits(max_attempts=4),
                                    server_options={"context_window": 600})
    assert outcome.status == "failed" and outcome.attempts == 2
    assert "context_overflow" in outcome.reason and "window is 600 tokens" in outcome.reason
    requested = [e for e in events if e["event"] == "error"][-1]["requested_tokens"]
    assert f"needed {requested}" in outcome.reason
    assert {e["context_window"] for e in events if e["event"] == "prompt_fitted"} == {600}
    assert_no_body_repeated_at_temperature_zero(server.requests)  # the refused body was never re-sent
    assert outcome.usage["requests"] == len(server.requests)
    assert outcome.usage["failed"] == server.overflows == 2


def test_a_conversation_is_fitted_to_a_window_learnt_from_the_server(scratch: Path) -> None:
    answer = ScriptedAnswer("task_tiny", "SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city",
                            TINY_QUESTION, explore=("SELECT * FROM orders",))
    outcome, server, events = solve(scratch, handler=solver_handler([answer]), limits=Limits(max_attempts=1),
                                    server_options={"context_window": 6144, "report_window": "models"})
    assert outcome.status == "solved"
    assert server.overflows == 0
    assert all(server.prompt_tokens(b) + b["max_tokens"] <= 6144 for b in server.requests)
    assert {e.get("context_window") for e in events if e["event"] == "context_window"} == {6144}


@pytest.mark.parametrize("tool_mode", ["auto", "text"])
def test_a_text_calling_server_that_answers_in_prose_first_is_solved(scratch: Path, tool_mode: str) -> None:
    answer = ScriptedAnswer("task_tiny", "SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city",
                            TINY_QUESTION, explore=("SELECT count(*) FROM orders",))
    handler = text_writer(solver_handler([answer]), prose_first=True)
    outcome, server, events = solve(scratch, handler=handler, limits=Limits(max_attempts=1), tool_mode=tool_mode)
    assert outcome.status == "solved" and outcome.prediction.read_text(encoding="utf-8") == EXPECTED_CSV
    forms = [e["form"] for e in events if e["event"] == "text_tool_calls"]
    assert set(forms) == {"hermes", "json"}
    assert all(("tools" in b) == (tool_mode == "auto") for b in server.requests)
    # The prose's SQL (a made-up table) was tested for the model and failed; every other call was text.
    vias = [(c["name"], c["via"]) for c in events if c["event"] == "tool_call"]
    assert vias[0] == ("explore_data", "written") and all(via == "text" for _, via in vias[1:])
