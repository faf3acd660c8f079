"""The cheapest path first (agent/direct.py): one direct answer query before the tool loop; a
repair and sampled candidates when it fails, chosen by execution; the loop only when none passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.agent import Limits
from datasolver.direct_step import Candidate, choose
from tests.helpers.agent import solve_scripted
from datasolver.llm.fake import text, tool_call
from datasolver.solver.prepare import prepare_task
from datasolver.data.layout import TaskFolder
from tests.helpers.solver import PAPER_SQL, make_paper_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

ANSWER_CSV = "title\nAdaptive Joins\nMedian Sketches\nZebra Streams\n"
EMPTY_SQL = "SELECT title FROM paper WHERE year = 2030"  # no such year: an empty result
WITH_YEAR_SQL = "SELECT title, year FROM paper WHERE year = 2020 ORDER BY title"  # an extra column


def sql(query: str) -> str:
    return f"```sql\n{query}\n```"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, **limits):
    return solve_scripted(scratch, script, limits=Limits(max_attempts=1, send_backs=0, direct_answer=True, **limits))


def test_a_direct_query_that_passes_the_checks_is_published_after_one_request(scratch: Path) -> None:
    outcome, server, events = solve(scratch, [text(sql(PAPER_SQL))])
    assert (outcome.status, outcome.requests, outcome.attempts) == ("solved", 1, 0)
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    [request] = server.requests
    # The loop's own opening (rules, tools, task message) with one line asking for the query, tools off.
    assert request["tool_choice"] == "none" and {t["function"]["name"] for t in request["tools"]} >= {"run_solver"}
    assert request["messages"][-1]["content"].rstrip().endswith(
        "select only the columns the question asks for.")
    assert PAPER_SQL in (scratch / "workdir" / "solver.py").read_text(encoding="utf-8")  # the program stays the answer
    calls = [(e["name"], e["via"]) for e in events if e["event"] == "tool_call"]
    assert calls == [("edit_solver", "direct"), ("run_solver", "direct")]
    [chosen] = [e for e in events if e["event"] == "direct_answer"]
    assert chosen["chosen"] == "direct" and "passed the answer checks" in chosen["how"]


def test_the_direct_request_shares_the_loops_prefix(scratch: Path) -> None:
    """When the direct path finds nothing, the loop's first request is the direct one without its
    last line: the server's prefix cache serves it."""
    outcome, server, _ = solve(scratch, [text("I will look at the data."), text("Done.")])
    direct, loop = server.requests
    assert direct["tools"] == loop["tools"] and direct["messages"][0] == loop["messages"][0]
    assert direct["messages"][-1]["content"].startswith(loop["messages"][-1]["content"].rstrip())
    assert "tool_choice" not in loop
    assert outcome.status == "failed"  # the script's loop answered nothing


def test_an_empty_result_gets_one_repair_turn_with_the_check_line(scratch: Path) -> None:
    outcome, server, events = solve(scratch, [text(sql(EMPTY_SQL)), text(sql(PAPER_SQL))])
    assert (outcome.status, outcome.requests) == ("solved", 2)
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": sql(EMPTY_SQL)}
    assert repair[-1]["content"].startswith("That query did not give the answer: CHECK empty_result:")
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"]) for c in candidates] == [("direct", False), ("repair", True)]


def test_sampled_candidates_are_chosen_by_execution_and_majority(scratch: Path) -> None:
    # The direct query and its repair fail; two of three samples agree on the right answer.
    script = [text(sql(EMPTY_SQL)), text(sql(EMPTY_SQL)), text(sql(WITH_YEAR_SQL)), text(sql(PAPER_SQL)),
              text(sql("SELECT title FROM paper WHERE year = 2020"))]
    outcome, server, events = solve(scratch, script, direct_samples=3)
    assert outcome.status == "solved" and outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    assert [r.get("temperature") for r in server.requests][2:] == [0.7, 0.7, 0.7]
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [c["source"] for c in candidates] == ["direct", "repair", "sample 1", "sample 2", "sample 3"]
    assert candidates[1].get("repeated") == "direct"  # the same query again is not run again
    [chosen] = [e for e in events if e["event"] == "direct_answer"]
    assert chosen["chosen"] == "sample 2" and chosen["how"].startswith("2 of 5 candidate queries agree")
    # The chosen query is solver.py's again, though another ran after it.
    assert "ORDER BY title ASC" in (scratch / "workdir" / "solver.py").read_text(encoding="utf-8")


def test_when_no_candidate_passes_the_loop_starts_and_learns_what_was_rejected(scratch: Path) -> None:
    script = [text(sql(EMPTY_SQL)), text(sql(EMPTY_SQL)), tool_call("explore_data", {"query": "\\tables"}),
              text("Done.")]
    outcome, server, events = solve(scratch, script, direct_samples=0)
    assert len(server.requests) == 4
    opening = server.requests[2]["messages"][-1]["content"]
    assert "answer queries already run that did not give the answer (do not write them again):" in opening
    assert f"`{EMPTY_SQL}` → CHECK empty_result:" in opening
    assert "tool_choice" not in server.requests[2]
    [chosen] = [e for e in events if e["event"] == "direct_answer"]
    assert chosen["chosen"] is None and "none of 2 candidate queries passed" in chosen["how"]


def test_a_query_given_as_a_tool_call_anyway_is_a_candidate(scratch: Path) -> None:
    outcome, server, _ = solve(scratch, [tool_call("edit_solver", {"sql": PAPER_SQL})])
    assert (outcome.status, outcome.requests) == ("solved", 1)


def test_choose_prefers_passing_candidates_then_the_majority_then_the_earliest() -> None:
    a = Candidate("q1", "direct", ok=True, signature="A")
    b = Candidate("q2", "sample 1", ok=True, signature="B")
    b2 = Candidate("q3", "sample 2", ok=True, signature="B")
    flagged = Candidate("q4", "sample 3", ok=True, blocking=["CHECK duplicate_rows: …"], signature="C")
    assert choose([a, b, b2, flagged])[0] is b
    assert choose([a, b])[0] is a
    assert choose([flagged])[0] is None


def loop_answer(query: str) -> list:
    return [tool_call("edit_solver", {"sql": query}), tool_call("run_solver", {}), text("Done."), text("Done.")]


def test_an_answer_whose_checks_still_fail_is_held_while_another_attempt_may_do_better(scratch: Path) -> None:
    script = loop_answer(EMPTY_SQL) + loop_answer(PAPER_SQL)
    outcome, server, events = solve_scripted(scratch, script, limits=Limits(max_attempts=2, hold_flagged=True))
    assert (outcome.status, outcome.attempts) == ("solved", 2)
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    [held] = [e for e in events if e["event"] == "answer_held"]
    assert held["attempt"] == 1 and held["checks"] == ["empty_result"]
    second_opening = server.requests[4]["messages"][-1]["content"]
    assert f"`{EMPTY_SQL}` → CHECK empty_result:" in second_opening


def test_at_the_end_the_held_answer_with_the_fewest_failed_checks_is_published(scratch: Path) -> None:
    # Both attempts end flagged; the last attempt's answer cannot be held (no attempt left) and is
    # published as it is, as before.
    script = loop_answer(EMPTY_SQL) + loop_answer(EMPTY_SQL)
    outcome, _, events = solve_scripted(scratch, script, limits=Limits(max_attempts=2, hold_flagged=True))
    assert outcome.status == "solved" and outcome.attempts == 2
    assert [e["attempt"] for e in events if e["event"] == "answer_held"] == [1]


def test_a_direct_candidate_that_ran_but_failed_checks_is_published_when_nothing_better_comes(scratch: Path) -> None:
    script = [text(sql(EMPTY_SQL)), text("I give up."), text("Done.")]
    outcome, _, events = solve_scripted(scratch, script, limits=Limits(
        max_attempts=1, send_backs=0, direct_answer=True, direct_samples=0, hold_flagged=True))
    assert outcome.status == "fallback" and "held back for: CHECK empty_result" in outcome.reason
    [published] = [e for e in events if e["event"] == "held_answer_published"]
    assert published["source"] == "the direct path (direct)"


def test_the_warm_up_sends_the_rules_and_tools_every_task_opens_with(scratch: Path) -> None:
    """The batch's warm-up request holds the same system message and tool schemas as a task's
    first request (so a server's prompt cache serves them to every task), with tools off and a
    one-token reply."""
    import asyncio

    from datasolver.agent.warm_up import warm_up
    from tests.helpers.agent import fake_client
    from datasolver.llm.fake import ScriptedModel

    with ScriptedModel([]) as server:  # the scripted model answers a warm-up itself: no turn is spent
        async def go():
            async with fake_client(server) as client:
                return await warm_up(client, Limits())
        done = asyncio.run(go())
        [warm] = [r.body for r in server.records if r.method == "POST"]
        assert server.requests == [] and server.preflights == 0
    assert done.error is None and done.prompt_tokens > 0
    assert (warm["tool_choice"], warm["max_tokens"]) == ("none", 1)
    _, task_server, _ = solve(scratch, [text(sql(PAPER_SQL))])
    [first] = task_server.requests
    assert warm["messages"][0] == first["messages"][0] and warm["tools"] == first["tools"]


def test_a_column_one_key_away_gets_its_join_written_by_the_program_before_any_repair(scratch: Path) -> None:
    """The model reads `title` and `year` from `writes`, which has neither (paper has them, one key away):
    the program writes the join (`data/rules/join_path.py`), runs it as a candidate, and it passes the checks:
    one request, the rule named in the trace."""
    outcome, server, events = solve(scratch, [text(sql("SELECT title FROM writes WHERE year = 2020 ORDER BY title"))])
    assert (outcome.status, len(server.requests)) == ("solved", 1)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"], c.get("rule")) for c in candidates] == [
        ("direct", False, None), ("rewrite 1", True, "join_path")]
    assert "joined by key: writes → paper (on pid = pid)" in candidates[1]["rewritten"]
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV


def test_two_named_years_in_look_alike_tables_are_answered_from_their_union(tmp_path: Path) -> None:
    """The model reads one of two yearly tables for a question naming both years; its query passes every
    check, and before it is published the program writes the union of both years' tables
    (`data/rules/period_union.py`), which passes the checks too and is chosen: one request, the rule in the trace."""
    task = TaskFolder(tmp_path / "input" / "task_sales")
    (task.context / "csv").mkdir(parents=True)
    task.task_json.write_text(json.dumps({"task_id": "task_sales", "difficulty": "medium",
                                          "question": "What was the total amount sold in 2021 and 2022?"}),
                              encoding="utf-8")
    for year, rows in (("2021", "north,5\nsouth,7\n"), ("2022", "north,6\nsouth,9\n")):
        (task.context / "csv" / f"sales_{year}.csv").write_text("region,amount\n" + rows, encoding="utf-8")
    scratch = prepare_task(task.root, tmp_path / "scratch")
    outcome, server, events = solve(scratch, [text(sql("SELECT SUM(amount) AS total FROM sales_2022"))])
    assert (outcome.status, len(server.requests)) == ("solved", 1)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"], c.get("rule")) for c in candidates] == [
        ("direct", True, None), ("rows rewrite 1", True, "period_union")]
    assert outcome.prediction.read_text(encoding="utf-8") == "year,total\n2021,12.0\n2022,15.0\n"
    [chosen] = [e for e in events if e["event"] == "direct_answer"]
    assert chosen["chosen"] == "rows rewrite 1" and "period_union" not in chosen["how"]


def test_two_named_entities_in_two_cities_look_alike_tables_are_answered_from_their_union(tmp_path: Path) -> None:
    """The question names two listings, one in each city's table (same columns); the model reads one
    city's table, its one row passes every check, and before it is published the program writes the union
    of both cities' tables (`rules/entity_union.py`), which passes too and is chosen: both listings' rows."""
    task = TaskFolder(tmp_path / "input" / "task_listings")
    (task.context / "csv").mkdir(parents=True)
    task.task_json.write_text(json.dumps({"task_id": "task_listings", "difficulty": "medium",
                                          "question": "What is the nightly price of Loft Marais and Casa Trastevere?"}),
                              encoding="utf-8")
    for city, rows in (("paris", "Loft Marais,120\nStudio Bastille,90\n"), ("rome", "Casa Trastevere,100\n")):
        (task.context / "csv" / f"listings_{city}.csv").write_text("name,price\n" + rows, encoding="utf-8")
    scratch = prepare_task(task.root, tmp_path / "scratch")
    query = "SELECT name, price FROM listings_paris WHERE name IN ('Loft Marais', 'Casa Trastevere')"
    outcome, server, events = solve(scratch, [text(sql(query))])
    assert (outcome.status, len(server.requests)) == ("solved", 1)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"], c.get("rule")) for c in candidates] == [
        ("direct", True, None), ("rows rewrite 1", True, "entity_union")]
    assert outcome.prediction.read_text(encoding="utf-8") == "name,price\nLoft Marais,120\nCasa Trastevere,100\n"
def test_a_failed_repair_gets_the_programs_rewrites_too(scratch: Path) -> None:
    """The one direct step (`datasolver.direct_step`) gives every query of the conversation that failed or
    found nothing to the program's rewrites: here the repair reads `title` and `year` from `writes`, and the
    join the program writes (`rules/join_path.py`) passes the checks without a second repair."""
    script = [text(sql("SELECT titel FROM paper")), text(sql("SELECT title FROM writes WHERE year = 2020 ORDER BY title"))]
    outcome, server, events = solve(scratch, script, direct_samples=0)
    assert (outcome.status, len(server.requests)) == ("solved", 2)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"], c.get("rule")) for c in candidates][1:] == [
        ("repair", False, None), ("rewrite 1", True, "join_path")]
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV


def test_a_failed_sample_gets_the_programs_rewrites_too(scratch: Path) -> None:
    """Samples are candidates like the rest: the direct query and its repair find nothing, the sample reads
    `title` and `year` from `writes`, and the join the program writes (`rules/join_path.py`) passes the checks
    with no further request."""
    script = [text(sql(EMPTY_SQL)), text(sql(EMPTY_SQL)), text(sql("SELECT title FROM writes WHERE year = 2020 ORDER BY title"))]
    outcome, server, events = solve(scratch, script, direct_samples=1)
    assert (outcome.status, len(server.requests)) == ("solved", 3)
    candidates = [e for e in events if e["event"] == "direct_candidate"]
    assert [(c["source"], c["passes"], c.get("rule")) for c in candidates][-2:] == [
        ("sample 1", False, None), ("rewrite 1", True, "join_path")]
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
