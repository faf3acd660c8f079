"""A loop that converges or stops (issue 46), against the scripted model at the client's transport:

- a query the model sent before is not run again: the earlier result comes back with what to change;
- a call that calls nothing (`null`) is a reply without a call, and a reply that writes a tool result
  again is read without the echo;
- rounds without progress end the attempt (`Limits.stall_rounds`), and the best candidate by the
  checks is published."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.llm import ToolCall
from datasolver.llm.fake import ScriptedModel, text, tool_call, tool_calls
from datasolver.llm.text_calls import is_null_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.agent import edit_query_turn
from tests.helpers.agent import solve as run_solve
from tests.helpers.solver import make_tiny_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

CITIES = 'result = run_sql("SELECT DISTINCT city FROM orders ORDER BY city")'


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, limits: Limits = Limits(max_attempts=1)):
    return run_solve(scratch, script, limits, send_backs=limits.send_backs, face=ScriptedModel)


def explore(sql: str):
    return tool_call("explore_data", {"query": sql})


def tool_results(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# -- a query sent before ---------------------------------------------------------------------------

@pytest.mark.parametrize("first, again, change", [
    ("SELECT city FROM orders WHERE city = 'Rome'", "select city  from orders\nwhere city = 'Rome';",
     "change a filter value"),
    # (a column no table has: `country`, one key away in cities, gets the program's join instead,
    # tests/test_agent_loop_rewrites.py)
    ("SELECT colour FROM orders", "SELECT colour FROM orders", "change the table or the join path"),
    ("SELECT DISTINCT city FROM orders", "SELECT DISTINCT city FROM ORDERS", "if these rows do not answer"),
])
def test_a_query_sent_again_is_answered_with_its_earlier_result_and_what_to_change(
        scratch: Path, first: str, again: str, change: str) -> None:
    outcome, model, events = solve(scratch, [explore(first), explore(again), text("I give up.")],
                                   Limits(max_attempts=1, send_backs=0))
    earlier, repeated = tool_results(model.requests[2])
    assert repeated.startswith("(note: you sent this query before (1 time already)") and change in repeated
    assert repeated.endswith(earlier)  # the earlier result, word for word
    [event] = [e for e in events if e["event"] == "repeated_query"]
    assert event["times"] == 2
    assert outcome.attempt_results[0].repeated_queries == 1
    # Not run again: the catalog saw one query (the trace's result of the repeat is the memory's).
    results = [e for e in events if e["event"] == "tool_result"]
    assert results[1]["latency_s"] == 0.0 and not results[1]["ok"]


def test_the_same_query_with_another_value_in_quotes_is_a_new_query(scratch: Path) -> None:
    script = [explore("SELECT city FROM orders WHERE city = 'paris'"),
              explore("SELECT city FROM orders WHERE city = 'Paris'"), text("Paris.")]
    outcome, model, events = solve(scratch, script, Limits(max_attempts=1, send_backs=0))
    assert not [e for e in events if e["event"] == "repeated_query"]
    assert "Paris" in tool_results(model.requests[2])[1]


def test_a_written_query_sent_before_is_not_put_into_solver_py(scratch: Path) -> None:
    sql = "SELECT city FROM orders WHERE city = 'Rome'"
    script = [explore(sql), text(f"```sql\n{sql}\n```"), text("No rows.")]
    outcome, model, events = solve(scratch, script, Limits(max_attempts=1, send_backs=0))
    # The reply goes back as the call it stood for, its result as text (as a written query's always does).
    assert "you sent this query before" in model.requests[2]["messages"][-1]["content"]
    [adopted] = [e for e in events if e["event"] == "query_adopted"]
    assert adopted["repeated"] and not adopted["ran"]
    assert not [e for e in events if e["event"] == "tool_call" and e["name"] == "edit_solver"]


# -- calls that call nothing -----------------------------------------------------------------------

@pytest.mark.parametrize("name, args, null", [
    ("", "null", True), ("null", "", True), ("", '{"name": null, "arguments": null}', True), ("None", "{}", True),
    ("", '{"query": "SELECT 1"}', False), ("explore_data", "null", False), ("", "{broken", False),
])
def test_a_null_call_is_one_with_no_name_and_no_arguments(name: str, args: str, null: bool) -> None:
    assert is_null_call(ToolCall("c1", name, args)) is null


def test_a_reply_of_null_calls_is_a_reply_without_a_call(scratch: Path) -> None:
    script = [tool_call("", "null"), edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), text("Done.")]
    outcome, model, events = solve(scratch, script)
    assert outcome.status == "solved"
    [sent_back] = [e for e in events if e["event"] == "sent_back"]  # the no-call path, not an unknown tool
    assert not [e for e in events if e["event"] == "tool_call" and not e["name"]]
    assert [e["count"] for e in events if e["event"] == "null_calls"] == [1]
    assert outcome.attempt_results[0].null_calls == 1
    assert "tool_calls" not in model.requests[1]["messages"][-2]


def test_a_null_call_beside_a_real_one_is_dropped_and_the_real_one_runs(scratch: Path) -> None:
    script = [tool_calls([("", "null"), ("explore_data", {"query": "SELECT 1 AS x"})]), text("1")]
    outcome, model, events = solve(scratch, script, Limits(max_attempts=1, send_backs=0))
    assert [m["role"] for m in model.requests[1]["messages"]][-2:] == ["assistant", "tool"]
    assert [e["name"] for e in events if e["event"] == "tool_call"] == ["explore_data"]


def test_a_reply_that_writes_a_tool_result_again_is_read_without_the_echo(scratch: Path) -> None:
    # The echo holds a query (the program's own next step); the reply itself holds none.
    echo = "<tool_response>\nNO OUTPUT. Try:\n```sql\nSELECT DISTINCT city FROM orders\n```\n</tool_response>"
    outcome, model, events = solve(scratch, [text(echo), text("Done.")])
    assert not [e for e in events if e["event"] == "query_adopted"]
    [sent_back] = [e for e in events if e["event"] == "sent_back"]


# -- a loop that stops improving -------------------------------------------------------------------

def test_two_rounds_without_progress_stop_and_the_best_candidate_is_published(scratch: Path) -> None:
    rows = "SELECT DISTINCT city FROM orders ORDER BY city"
    script = [explore(rows), explore("SELECT nope FROM orders"), explore(rows), explore("never sent")]
    outcome, model, events = solve(scratch, script, Limits(max_attempts=3, stall_rounds=2))
    assert len(model.requests) == 3 and len(outcome.attempt_results) == 1  # no second attempt either
    result = outcome.attempt_results[0]
    assert (result.ended, result.stalled_rounds) == ("stalled", 2)
    [stalled] = [e for e in events if e["event"] == "stalled"]
    assert stalled["rounds"] == 2
    assert outcome.status == "fallback" and outcome.prediction.read_text(encoding="utf-8") == "city\nLyon\nNice\nParis\n"
    assert outcome.reason.startswith("attempt 1 stopped improving (2 rounds without a new query with rows")


def test_a_stalled_attempt_with_an_answer_that_passes_its_checks_publishes_it(scratch: Path) -> None:
    script = [edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), tool_call("run_solver", {}),
              tool_call("run_solver", {}), text("never sent")]
    outcome, model, _ = solve(scratch, script, Limits(max_attempts=2, stall_rounds=2, send_backs=0))
    assert outcome.status == "solved" and outcome.attempt_results[0].ended == "stalled"
    assert outcome.reason.startswith("attempt 1 stopped improving")
    assert len(model.requests) == 4


def test_progress_resets_the_count(scratch: Path) -> None:
    # error, new rows, error, new rows, error: never two rounds in a row without progress.
    script = [explore("SELECT nope FROM orders"), explore("SELECT 1 AS a"), explore("SELECT nope2 FROM orders"),
              explore("SELECT 2 AS b"), explore("SELECT nope3 FROM orders"), edit_query_turn(scratch, CITIES),
              tool_call("run_solver", {}), text("Done.")]
    outcome, _, events = solve(scratch, script, Limits(max_attempts=1, stall_rounds=2))
    assert outcome.status == "solved" and not [e for e in events if e["event"] == "stalled"]


def test_without_stall_rounds_the_loop_goes_on(scratch: Path) -> None:
    bad = [explore(f"SELECT nope{i} FROM orders") for i in range(4)]
    outcome, model, _ = solve(scratch, [*bad, text("I cannot.")], Limits(max_attempts=1, send_backs=0))
    assert outcome.attempt_results[0].ended == "answered" and len(model.requests) == 5


def test_a_stall_with_nothing_to_publish_goes_on_to_the_next_attempt(scratch: Path) -> None:
    # Two rounds without progress and nothing to publish (no answer, no query with rows): ending the
    # task there would end it with no answer, so the next attempt starts afresh and answers.
    script = [explore("SELECT nope FROM orders"), explore("SELECT nope2 FROM orders"),
              edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), text("Done.")]
    outcome, model, events = solve(scratch, script, Limits(max_attempts=2, stall_rounds=2, send_backs=0))
    assert [r.ended for r in outcome.attempt_results][0] == "stalled"
    assert [e["attempt"] for e in events if e["event"] == "stall_goes_on"] == [1]
    assert outcome.status == "solved" and len(outcome.attempt_results) == 2
    assert outcome.prediction.read_text(encoding="utf-8") == "city\nLyon\nNice\nParis\n"
