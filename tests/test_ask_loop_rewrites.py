"""The program's rewrites in the analyst's tool loop (`ask/offer.py` over `data/rules/offer.py`): a `query`
call that failed or found nothing gets the task-stage rules the direct step's judge applies; the first
rewrite that returns rows comes back with the tool result (its rule, reason, SQL, rows and what to do in
the analyst's words), and each rewrite run is a trace event naming its rule, as in the Solver's loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from datasolver.ask import Analyst, AskConfig, open_package
from datasolver.llm import LLMClient, LLMSettings, TraceWriter
from datasolver.llm.fake import ScriptedModel, text, tool_call
from tests.helpers.solver import PAPER_TABLES

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

PAPER_QUESTION = "What are the titles of the papers published in 2020?"
FROM_WRITES = "SELECT title FROM writes WHERE year = 2020 ORDER BY title"  # title and year are paper's, one key away
PAPER_SQL = "SELECT title FROM paper WHERE year = 2020 ORDER BY title"


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    for name, rows in PAPER_TABLES.items():
        (folder / f"{name}.csv").write_text(rows, encoding="utf-8")
    return folder


@pytest.fixture
def orders(tmp_path: Path) -> Path:
    folder = tmp_path / "orders"
    folder.mkdir()
    (folder / "orders.csv").write_text("order_id,city,amount\n1,Paris,10.5\n2,Lyon,3\n3,Paris,7\n4,Nice,\n",
                                       encoding="utf-8")
    return folder


def ask(data: Path, script, question: str, tmp_path: Path):
    """Answer through the tool loop (the direct step off) with the scripted model; the requests it got and
    the trace's events."""
    trace = TraceWriter(tmp_path / "trace.jsonl")
    with ScriptedModel(script) as server, open_package(data, cache_dir=tmp_path / "cache") as package:
        async def main():
            settings = LLMSettings(**server.connection(), api_key=None, model="fake", max_retries=0)
            async with LLMClient(settings, trace) as client:
                return await Analyst(package, client, AskConfig(direct_answer=False)).ask(question)

        result = asyncio.run(main())
        assert not server.errors, server.errors
    return result, server.requests, trace.read()


def tool_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def rewrites(events) -> tuple[list[dict], list[dict]]:
    return ([e for e in events if e["event"] == "rule_rewrite"], [e for e in events if e["event"] == "rewrite_offered"])


def test_a_column_one_key_away_gets_the_programs_join_beside_the_error(papers: Path, tmp_path: Path) -> None:
    script = [tool_call("query", {"sql": FROM_WRITES}), tool_call("query", {"sql": PAPER_SQL}),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    result, requests, events = ask(papers, script, PAPER_QUESTION, tmp_path)
    [failed] = tool_texts(requests[1])
    assert failed.startswith("QueryError") and "not found" in failed  # the error, as before
    assert "rule join_path" in failed and "joined by key: writes → paper (on pid = pid)" in failed
    assert "JOIN" in failed.split("```sql", 1)[1]  # the rewritten SQL
    assert "rows: 3 of 3" in failed and "Adaptive Joins" in failed  # its rows
    assert "call query with this SQL" in failed and "final_answer" in failed  # what to do, in the analyst's words
    assert "edit_solver" not in failed
    tried, [offered] = rewrites(events)
    assert tried[-1]["rule"] == "join_path" and tried[-1]["rows"] == 3
    assert (offered["rule"], offered["name"], offered["again"]) == ("join_path", "query", False)
    # Shown, not stored: the model's own query is @1, and the answer rests on it.
    assert result.answer == "Adaptive Joins, Median Sketches, Zebra Streams" and result.backed_by_query
    assert [h["ref"] for h in result.handles] == ["@1"]


def test_a_filter_value_spelt_otherwise_gets_the_existing_value(orders: Path, tmp_path: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT order_id, amount FROM orders WHERE city = 'paris'"}),
              tool_call("query", {"sql": "SELECT order_id, amount FROM orders WHERE city = 'Paris'"}),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@2"})]
    result, requests, events = ask(orders, script, "Which orders were made in Paris?", tmp_path)
    empty = tool_texts(requests[1])[0]
    assert empty.startswith("result @1  (query)\nrows: 0")  # what the query found, as before
    assert "'Paris'" in empty.split("```sql", 1)[1] and "rows: 2 of 2" in empty
    tried, [offered] = rewrites(events)
    assert f"rule {offered['rule']}:" in empty and offered["rule"] in {t["rule"] for t in tried}
    assert "call query with this SQL" in empty


def test_a_query_with_rows_gets_no_rewrite(orders: Path, tmp_path: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT DISTINCT city FROM orders ORDER BY city"}),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    result, requests, events = ask(orders, script, "Which cities have orders?", tmp_path)
    assert "program rewrote" not in tool_texts(requests[1])[0]
    assert rewrites(events) == ([], [])
    assert result.answer == "Lyon, Nice, Paris"


def test_a_written_query_that_fails_gets_the_rewrite_and_a_repeat_gets_it_from_memory(papers: Path,
                                                                                       tmp_path: Path) -> None:
    script = [text(f"```sql\n{FROM_WRITES}\n```"), tool_call("query", {"sql": FROM_WRITES}),
              tool_call("query", {"sql": PAPER_SQL}), tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    result, requests, events = ask(papers, script, PAPER_QUESTION, tmp_path)
    written = requests[1]["messages"][-1]["content"]  # the written query's result, as the reply's call's
    [repeated] = tool_texts(requests[2])
    assert "it was run for you as query" in written and "rule join_path" in written
    assert "rule join_path" in repeated
    tried, offered = rewrites(events)
    assert [o["again"] for o in offered] == [False, True] and len(tried) == 1  # not run again


def test_a_query_over_a_stored_result_gets_no_rewrite(orders: Path, tmp_path: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT order_id, city FROM orders"}),
              tool_call("query", {"sql": "SELECT order_id FROM @1 WHERE city = 'paris'"}),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    _, requests, events = ask(orders, script, "Which orders were made in Paris?", tmp_path)
    assert "program rewrote" not in tool_texts(requests[2])[1]
    assert rewrites(events) == ([], [])
