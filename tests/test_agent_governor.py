"""The must-submit governor, the fallback to the last explore query that returned rows, and the
repeated-error rule, against the scripted model (at the client's transport)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.agent.governor import ErrorStreak, must_submit_reason
from tests.helpers.agent import edit_query_turn
from datasolver.llm.fake import ScriptedModel, text, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import make_tiny_task
from tests.helpers.agent import solve as run_solve

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

CITIES = 'result = run_sql("SELECT DISTINCT city FROM orders ORDER BY city")'


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, limits: Limits):
    """The scripted runner, keeping the send-backs `limits` asks for."""
    return run_solve(scratch, script, limits, send_backs=limits.send_backs, face=ScriptedModel)


def explore(sql: str):
    return tool_call("explore_data", {"query": sql})


def test_must_submit_is_said_once_when_the_reserve_is_reached(scratch: Path) -> None:
    script = [explore("SELECT 1"), explore("SELECT 2"), explore("SELECT 3"),
              edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), text("Done.")]
    limits = Limits(max_requests_per_attempt=6, reserve_requests=3, max_attempts=1)
    outcome, server, events = solve(scratch, script, limits)
    assert (outcome.status, outcome.requests) == ("solved", 6)
    told = [i for i, body in enumerate(server.requests) if "Time to submit" in str(body["messages"][-1]["content"])]
    assert told == [3]  # the 4th request: 3 of 6 left
    [event] = [e for e in events if e["event"] == "must_submit"]
    assert event["reason"] == "only 3 model request(s) left in this attempt"
    assert outcome.attempt_results[0].must_submit == event["reason"]


def test_no_must_submit_after_an_ok_run(scratch: Path) -> None:
    script = [edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), explore("SELECT 1"), text("Done.")]
    outcome, _, events = solve(scratch, script, Limits(max_requests_per_attempt=5, reserve_requests=3))
    assert outcome.status == "solved"
    assert not [e for e in events if e["event"] == "must_submit"]


def test_the_fallback_runs_the_last_explore_query_that_returned_rows(scratch: Path) -> None:
    script = [explore("SELECT DISTINCT city FROM orders ORDER BY city"), explore("SELECT * FROM orders WHERE 1 = 0"),
              explore("\\tables"), text("The cities are Lyon, Nice and Paris."),
              text("Lyon, Nice and Paris.")]  # the second after the prose send-back
    outcome, _, events = solve(scratch, script, Limits(max_attempts=1))
    assert outcome.status == "fallback"
    assert outcome.reason == ("attempt 1 ended (answered with prose) without prediction.csv; "
                              "fallback ran the last explore query that returned rows")
    assert outcome.prediction.read_text(encoding="utf-8") == "city\nLyon\nNice\nParis\n"
    [fallback] = [e for e in events if e["event"] == "fallback"]
    assert (fallback["source"], fallback["status"]) == ("the last explore query that returned rows", "OK")


def test_the_same_error_twice_is_named_and_three_times_ends_the_attempt(scratch: Path) -> None:
    # Three different queries with the same error (the same query again is answered from memory:
    # tests/test_agent_converge.py).
    script = [explore("SELECT nope FROM orders"), explore("SELECT nope FROM orders LIMIT 5"),
              explore("SELECT nope FROM orders LIMIT 6"), text("never sent")]
    outcome, server, events = solve(scratch, script, Limits(max_attempts=1))
    result = outcome.attempt_results[0]
    assert (result.ended, result.requests, outcome.status) == ("repeated_error", 3, "failed")
    results = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "same error" not in results[0]
    assert "this is the same error as your previous 1 call(s), word for word" in results[1]
    assert "check table and column names with `\\schema <table>`" in results[1]
    assert [e["count"] for e in events if e["event"] == "repeated_error"] == [2, 3]


@pytest.mark.parametrize(("requests", "seconds", "expected"), [
    (0, None, None),
    (76, None, None),
    (77, None, "only 3 model request(s) left in this attempt"),
    (1, 89.5, "about 89 s left before the task's deadline"),
    (1, 91.0, None),
])
def test_must_submit_reason(requests, seconds, expected) -> None:
    assert must_submit_reason(Limits(), requests, seconds) == expected


def test_a_short_task_keeps_at_most_a_quarter_of_its_time_in_reserve() -> None:
    assert must_submit_reason(Limits(), 1, 31.0, task_seconds=120.0) is None
    assert must_submit_reason(Limits(), 1, 29.0, task_seconds=120.0) == "about 29 s left before the task's deadline"


def test_error_streak_resets_on_success_and_on_another_error() -> None:
    streak = ErrorStreak()
    assert [streak.see(False, "a"), streak.see(False, "a"), streak.see(False, "b"), streak.see(True, "ok"),
            streak.see(False, "b")] == [1, 2, 1, 0, 1]


def test_when_the_last_edited_solver_fails_the_fallback_goes_on_to_the_last_explore_query(scratch: Path) -> None:
    """A fallback that fails is not the end while a later source may answer: the last edited solver.py
    errs, so the last explore query that returned rows is run and published, and the reason says both."""
    script = [explore("SELECT DISTINCT city FROM orders ORDER BY city"),
              edit_query_turn(scratch, 'result = run_sql("SELECT nope FROM orders")'), tool_call("run_solver", {}),
              text("The cities are Lyon, Nice and Paris."), text("Lyon, Nice and Paris.")]
    outcome, _, events = solve(scratch, script, Limits(max_attempts=1))
    assert outcome.status == "fallback"
    assert outcome.reason.startswith("attempt 1 ended (answered with prose) without prediction.csv; "
                                     "fallback run of the last edited solver.py: FAILED")
    assert outcome.reason.endswith("; fallback ran the last explore query that returned rows")
    assert outcome.prediction.read_text(encoding="utf-8") == "city\nLyon\nNice\nParis\n"
    fallbacks = [(e["source"], e["status"]) for e in events if e["event"] == "fallback"]
    assert fallbacks == [("the last edited solver.py", "FAILED"), ("the last explore query that returned rows", "OK")]
