"""The program's rewrites in the tool loop (`solver/tools/offer.py`, `data/rules/offer.py`): a query the
model sent that failed or found nothing gets the same task-stage rules the direct step applies; the first
rewrite that returns rows comes back with the tool result (its rule, reason, SQL, rows and what to do),
each rewrite run is a trace event naming its rule, and a repeat of the query gets the rewrite again."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.data import Catalog
from datasolver.data.rules.context import Rewrite
from datasolver.data.rules.offer import REWRITES_RUN, first_with_rows
from datasolver.llm.fake import ScriptedModel, text, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.agent import edit_query_turn
from tests.helpers.agent import solve as run_solve
from tests.helpers.solver import make_paper_task, make_tiny_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

ONE_ATTEMPT = Limits(max_attempts=1, send_backs=0)
FROM_WRITES = "SELECT title FROM writes WHERE year = 2020 ORDER BY title"  # title and year are paper's, one key away


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    return prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, limits: Limits = ONE_ATTEMPT):
    return run_solve(scratch, script, limits, send_backs=limits.send_backs, face=ScriptedModel)


def explore(sql: str):
    return tool_call("explore_data", {"query": sql})


def tool_results(body) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_column_one_key_away_gets_the_programs_join_beside_the_error(papers: Path) -> None:
    outcome, model, events = solve(papers, [explore(FROM_WRITES), text("I give up.")])
    [result] = tool_results(model.requests[1])
    assert "not found" in result  # the error, as before
    assert "rule join_path" in result and "joined by key: writes → paper (on pid = pid)" in result
    assert "JOIN" in result.split("```sql", 1)[1]  # the rewritten SQL
    assert "rows: 3 of 3" in result and "Adaptive Joins" in result  # its rows
    assert "edit_solver" in result and "run_solver" in result  # what to do
    tried = [e for e in events if e["event"] == "rule_rewrite"]
    assert tried and tried[-1]["rule"] == "join_path" and tried[-1]["rows"] == 3
    [offered] = [e for e in events if e["event"] == "rewrite_offered"]
    assert (offered["rule"], offered["name"], offered["again"]) == ("join_path", "explore_data", False)


def test_a_repeat_of_the_failed_query_gets_the_rewrite_again_not_the_bare_error(papers: Path) -> None:
    outcome, model, events = solve(papers, [explore(FROM_WRITES), explore(FROM_WRITES), text("I give up.")])
    first, repeated = tool_results(model.requests[2])
    assert repeated.startswith("(note: you sent this query before") and "program's rewrite" in repeated
    assert repeated.endswith(first) and "rule join_path" in repeated
    assert "take the program's rewrite shown below" in repeated  # what to change: the rewrite
    assert len([e for e in events if e["event"] == "rewrite_offered"]) == 1  # not run again


def test_a_filter_value_spelt_otherwise_gets_the_respelled_filter(tiny: Path) -> None:
    outcome, model, events = solve(tiny, [explore("SELECT order_id, amount FROM orders WHERE city = 'paris'"),
                                          text("No rows.")])
    [result] = tool_results(model.requests[1])
    assert result.startswith("rows: 0 of 0")  # what the query found, as before
    assert "rule nearest_value" in result and "'Paris'" in result.split("```sql", 1)[1]
    assert "rows: 2 of 2" in result
    [offered] = [e for e in events if e["event"] == "rewrite_offered"]
    assert offered["rule"] == "nearest_value"


def test_a_written_query_that_fails_gets_the_rewrite_with_its_error(papers: Path) -> None:
    outcome, model, events = solve(papers, [text(f"```sql\n{FROM_WRITES}\n```"), text("I give up.")])
    result = model.requests[1]["messages"][-1]["content"]  # the written query's result, as the reply's
    assert "not found" in result and "rule join_path" in result and "rows: 3 of 3" in result
    # The rewrite is the latest query with rows: with no answer, the fallback publishes it.
    assert outcome.status == "fallback"
    assert outcome.prediction.read_text(encoding="utf-8") == "title\nAdaptive Joins\nMedian Sketches\nZebra Streams\n"


def test_a_run_of_solver_py_that_fails_gets_the_rewrite_of_its_query(papers: Path) -> None:
    script = [edit_query_turn(papers, f'result = run_sql("{FROM_WRITES}")'), tool_call("run_solver", {}),
              text("I give up.")]
    outcome, model, events = solve(papers, script)
    result = tool_results(model.requests[2])[-1]
    assert result.startswith("FAILED") and "rule join_path" in result and "Adaptive Joins" in result
    [offered] = [e for e in events if e["event"] == "rewrite_offered"]
    assert offered["name"] == "run_solver"


def test_a_run_of_solver_py_that_finds_nothing_gets_the_rewrite_of_its_query(tiny: Path) -> None:
    script = [edit_query_turn(tiny, "result = run_sql(\"SELECT order_id FROM orders WHERE city = 'paris'\")"),
              tool_call("run_solver", {}), text("I give up."), text("Still nothing.")]  # sent back once: checks failed
    outcome, model, events = solve(tiny, script)
    result = tool_results(model.requests[2])[-1]
    assert "empty_result" in result and "rule nearest_value" in result


def test_a_query_with_rows_gets_no_rewrite(tiny: Path) -> None:
    outcome, model, events = solve(tiny, [explore("SELECT city FROM orders"), text("Paris, Lyon, Nice.")])
    assert "program rewrote" not in tool_results(model.requests[1])[0]
    assert not [e for e in events if e["event"] in ("rule_rewrite", "rewrite_offered")]


def test_the_offer_runs_at_most_its_bound_of_rewrites(tiny: Path) -> None:
    catalog = Catalog.open(tiny)
    try:
        catalog.query("SELECT * FROM orders")  # the table loaded first: the bounds below are on the rewrites alone
        failing = [Rewrite("SELECT nope FROM orders", "a column that is not there", "made_up")] * (REWRITES_RUN + 2)
        offer = first_with_rows(catalog, failing, budget_s=60.0)  # the count bound, whatever the machine's load
        assert len(offer.tried) == REWRITES_RUN and offer.found is None
        assert all(t.error for t in offer.tried)
        assert first_with_rows(catalog, failing, budget_s=0.0).tried == ()  # no time: nothing starts
        found = first_with_rows(catalog, [failing[0], Rewrite("SELECT city FROM orders", "ok", "made_up")])
        assert found.found is not None and found.found.sql == "SELECT city FROM orders" and found.result.total_rows == 4
        empty_count = first_with_rows(catalog, [Rewrite("SELECT count(*) FROM orders WHERE city = 'x'", "", "r")])
        assert empty_count.found is None and empty_count.tried[0].rows == 0  # a count of 0 over no rows is none
    finally:
        catalog.close()
