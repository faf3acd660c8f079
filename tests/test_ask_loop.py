"""The analyst loop against the scripted model: handles, templates, ties, reviewer, limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from datasolver.ask import Analyst, AskConfig, AskLimits, open_package
from datasolver.ask.checks import NO_QUERY_NOTE, UNBACKED_MARK
from datasolver.ask.errors import EmptyQuestion
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter
from datasolver.llm.fake import ScriptedModel, text, tool_call, tool_calls

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

REGIONS = [f"Region {chr(65 + i)}{i}" for i in range(28)]
# Totals with a three-way tie for second place.
TOTALS = {REGIONS[0]: 100, REGIONS[1]: 90, REGIONS[2]: 90, REGIONS[3]: 90}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    lines = ["region,sales"] + [f"{r},{TOTALS.get(r, 10 + i)}" for i, r in enumerate(REGIONS)]
    (folder / "regions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "knowledge.md").write_text("sales are in tonnes (t).\n", encoding="utf-8")
    return folder


def run(data: Path, script, question: str = "Which regions?", config: AskConfig | None = None,
        trace: TraceWriter = NULL_TRACE):
    """Answer with the scripted model through the tool loop (the direct path off: these tests are
    about the loop); also return every SQL text that reached the catalog."""
    config = config or AskConfig(direct_answer=False)
    executed: list[str] = []
    with ScriptedModel(script) as server, open_package(data, cache_dir=data.parent / "cache") as package:
        catalog = package.catalog
        query, create = catalog.query, catalog.create_temp_view
        catalog.query = lambda sql, limit=50, timeout_s=None: (executed.append(sql), query(sql, limit, timeout_s))[1]  # type: ignore[method-assign]
        catalog.create_temp_view = lambda name, sql: (executed.append(sql), create(name, sql))[1]  # type: ignore[method-assign]

        async def main():
            settings = LLMSettings(**server.connection(), api_key=None, model="fake", max_retries=0)
            async with LLMClient(settings, trace) as client:
                return await Analyst(package, client, config).ask(question)

        result = asyncio.run(main())
        assert not server.errors, server.errors
        return result, server.requests, executed


def tool_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_an_invented_handle_never_executes(data: Path) -> None:
    script = [
        tool_call("query", {"sql": "SELECT region, sales FROM regions WHERE sales >= 90"}),
        tool_calls([("query", {"sql": "SELECT * FROM @5"}),
                    ("filter", {"source": "result_1", "where": "sales > 95"}),
                    ("render", {"source": "h1"}),
                    ("query", {"sql": 'SELECT * FROM "_ask_deadbeef_1"'}),
                    ("query", {"sql": "SELECT * FROM query_table('_ask_deadbeef_1')"})]),
        tool_call("final_answer", {"answer": "Region A0", "evidence": ["@1"]}),
    ]
    result, requests, executed = run(data, script, "Which region sold most?")
    replies = tool_texts(requests[-1])[1:]
    assert replies[0] == "UnknownResult: no stored result @5. Stored results: @1 (or @latest)."
    assert replies[1].startswith("UnknownTable: no table named 'result_1'.")
    assert replies[2] == "UnknownResult: no stored result 'h1'. Stored results: @1 (or @latest)."
    assert replies[3].startswith("ReservedName: internal result names cannot be used")
    assert replies[4].startswith("ReservedName")
    assert not any(bad in sql for sql in executed for bad in ("@5", "result_1", "deadbeef", " h1"))
    assert result.answer == "Region A0" and [h["ref"] for h in result.handles] == ["@1"]


def test_a_long_result_is_answered_through_a_filled_template(data: Path) -> None:
    script = [
        tool_call("query", {"sql": "SELECT region FROM regions ORDER BY region"}),
        tool_call("render", {"source": "@1", "max_rows": 100}),
        tool_call("final_answer", {"answer": "The 28 regions are: {DATA}.", "data": "@1"}),
    ]
    result, requests, _ = run(data, script, "List all regions.")
    assert result.answer == "The 28 regions are: " + ", ".join(sorted(REGIONS)) + "."
    assert result.template == "The 28 regions are: {DATA}."
    rendered = tool_texts(requests[-1])[1]
    # 28 rows exceed the answer budget (20): render tells the model to answer through {DATA}.
    assert rendered.splitlines()[-1].startswith("note: 28 rows is more than an answer should spell out (20).")
    assert 'template containing {DATA} and data="@1"' in rendered


def test_render_is_capped_so_big_results_stay_out_of_the_prompt(data: Path) -> None:
    config = AskConfig(limits=AskLimits(render_rows=5), direct_answer=False)
    script = [tool_call("query", {"sql": "SELECT region FROM regions"}),
              tool_call("render", {"source": "@latest", "max_rows": 100}),
              tool_call("final_answer", {"answer": "{DATA}"})]
    result, requests, _ = run(data, script, config=config)
    rendered = tool_texts(requests[-1])[1].splitlines()
    assert rendered[0] == "result @1: showing 5 of 28 rows (truncated)" and len(rendered) == 1 + 1 + 5 + 1
    assert result.answer == ", ".join(REGIONS)


def test_group_with_ties_answers_every_tied_group(data: Path) -> None:
    script = [
        tool_call("group", {"source": "regions", "by": ["region"],
                            "aggregations": [{"func": "sum", "column": "sales", "name": "total"},
                                             {"func": "count", "name": "n"}], "top": 2}),
        tool_call("sort", {"source": "@1", "by": [{"column": "total", "descending": True}, {"column": "region"}]}),
        tool_call("final_answer", {"answer": "Top regions: {DATA}", "data": "@2", "row_format": "{region} ({total} t)"}),
    ]
    result, _, _ = run(data, script, "Which 2 regions sold most?")
    assert result.answer == "Top regions: Region A0 (100 t), Region B1 (90 t), Region C2 (90 t), Region D3 (90 t)"
    assert [h["ref"] for h in result.handles] == ["@1", "@2"]
    assert result.handles[0]["operation"] == "group regions by region: sum(sales), count(*); top 2 (ties kept)"


def test_the_record_holds_evidence_sql_that_reruns(data: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT region, sales FROM regions WHERE sales >= 90"}),
              tool_call("query", {"sql": "SELECT count(*) AS n FROM @1"}),
              tool_call("final_answer", {"answer": "4", "evidence": ["@2"]})]
    result, _, _ = run(data, script, "How many regions sold at least 90 t?")
    record = result.to_record()
    assert record["answer"] == "4" and record["ok"] is True
    assert record["usage"]["requests"] == 3 and record["usage"]["total_tokens"] > 0
    with open_package(data, cache_dir=data.parent / "c2") as package:
        assert package.catalog.query(record["evidence_sql"][0]).rows == [(4,)]
    assert [h["ref"] for h in record["handles"]] == ["@1", "@2"]
    json.dumps(record, default=str)


def test_reviewer_sends_the_analyst_back_once(data: Path) -> None:
    verdict = json.dumps({"verdict": "revise", "feedback": "The question asks for the top region, not all of them."})
    script = [
        tool_call("query", {"sql": "SELECT region FROM regions"}),
        tool_call("final_answer", {"answer": "{DATA}", "data": "@1"}),
        text(verdict),  # the reviewer
        tool_call("sort", {"source": "regions", "by": [{"column": "sales", "descending": True}], "top": 1}),
        tool_call("final_answer", {"answer": "{DATA}", "row_format": "{region}"}),
    ]
    result, requests, _ = run(data, script, "Which region sold most?", AskConfig(review=True, direct_answer=False))
    assert result.answer == "Region A0"
    assert (result.reviewed, result.sent_back) == (True, True)
    assert result.review_feedback == "The question asks for the top region, not all of them."
    review_request = requests[2]
    assert "tools" not in review_request
    prompt = review_request["messages"][0]["content"]
    assert "Which region sold most?" in prompt and "1. query(" in prompt and "result_1" not in prompt
    assert "SELECT region FROM regions" in prompt and "Region A0" in prompt
    back = requests[3]["messages"][-1]
    assert back["role"] == "user" and "The question asks for the top region" in back["content"]
    assert len(requests) == 5  # the second answer is not reviewed again


def test_reviewer_accept_and_unreadable_verdicts_keep_the_answer(data: Path) -> None:
    for reply in ('{"verdict": "accept"}', "looks fine to me"):
        script = [tool_call("query", {"sql": "SELECT count(*) AS n FROM regions"}),
                  tool_call("final_answer", {"answer": "28"}), text(reply)]
        result, requests, _ = run(data, script, "How many regions?", AskConfig(review=True, direct_answer=False))
        assert (result.answer, result.sent_back, len(requests)) == ("28", False, 3)
    assert any(note.startswith("unreadable reviewer verdict") for note in result.notes)


def test_request_cap_offers_only_final_answer_at_the_end(data: Path) -> None:
    config = AskConfig(limits=AskLimits(max_requests=3), direct_answer=False)
    script = [tool_call("list_tables"), tool_call("list_tables"),
              tool_call("final_answer", {"answer": "Region A0"})]
    result, requests, _ = run(data, script, config=config)
    assert [t["function"]["name"] for t in requests[-1]["tools"]] == ["final_answer"]
    assert "step budget is used up" in requests[-1]["messages"][-1]["content"]
    # No request is left to send it back: it is given, marked as what it is.
    assert result.answer == f"{UNBACKED_MARK} Region A0" and result.backed_by_query is False
    assert result.unbacked == NO_QUERY_NOTE


def test_no_answer_within_budget_is_reported(data: Path) -> None:
    config = AskConfig(limits=AskLimits(max_requests=2), direct_answer=False)
    result, _, _ = run(data, [tool_call("list_tables"), tool_call("list_tables")], config=config)
    # No stored result has rows: the answer says plainly that there is none, and why, never as if backed.
    assert (result.answer, result.stopped, result.backed_by_query) == (
        "[no answer: no answer within the request budget, and no stored result has rows]", "request_limit", False)
    assert "no answer within the request budget" in result.notes


def test_no_answer_within_budget_gives_the_latest_result_with_rows(data: Path) -> None:
    config = AskConfig(limits=AskLimits(max_requests=3), direct_answer=False)
    script = [tool_call("query", {"sql": "SELECT region, sales FROM regions WHERE sales >= 90 ORDER BY region"}),
              tool_call("query", {"sql": "SELECT region FROM regions WHERE sales > 1000"}), tool_call("list_tables")]
    result, _, _ = run(data, script, "Which regions sold at least 90 t?", config=config)
    assert result.answer == "region (sales): Region A0 (100), Region B1 (90), Region C2 (90), Region D3 (90)"
    assert (result.backed_by_query, result.unbacked, result.evidence_sql) == (
        True, None, ["SELECT region, sales FROM regions WHERE sales >= 90 ORDER BY region"])
    assert result.no_answer == ("no answer within the request budget; the answer is written from @1, the latest "
                                "result with rows")


def test_plain_text_reply_is_the_answer_at_temperature_zero(data: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT region FROM regions ORDER BY sales DESC LIMIT 1"}),
              text("Answer: **Region A0**")]
    result, requests, _ = run(data, script, "Which region sold most???")
    assert (result.answer, result.stopped, result.question) == ("Region A0", "text", "Which region sold most?")
    assert result.backed_by_query and result.notes[-1] == (
        "the answer cited no result; the latest result is reported as evidence")
    assert requests[0]["temperature"] == 0
    # The tables and knowledge.md, the question, then what it names in the data (question linking,
    # data/linking.py). The system prompt holds the rules only: the same for any data (cached).
    assert requests[0]["messages"][1] == {"role": "user", "content": (
        "Tables\n- regions (28 rows; regions.csv): region, sales\n\nKnowledge (knowledge.md)\nsales are in tonnes "
        "(t).\n\nQuestion\nWhich region sold most?\n\nMatched in table names and data without a model (check "
        "before relying on it):\n- table regions: its name shares region; the question uses column region")}
    system = requests[0]["messages"][0]["content"]
    assert "regions" not in system and "tonnes" not in system and "{{" not in system


def test_empty_result_is_questioned_and_nothing_matches_needs_a_changed_query(data: Path) -> None:
    script = [tool_call("query", {"sql": "SELECT region FROM regions WHERE sales > 1000"}),
              tool_call("final_answer", {"answer": "Regions: {DATA}"}),
              tool_call("final_answer", {"answer": "No region sold more than 1000 t."}),  # the same query
              tool_call("query", {"sql": "SELECT region FROM regions WHERE sales >= 1000"}),
              tool_call("final_answer", {"answer": "No region sold more than 1000 t."})]
    result, requests, _ = run(data, script)
    assert requests[2]["messages"][-1]["content"].startswith(
        "Your answer rests on @1: no rows. Re-run without each filter: without `sales > 1000`: 28 rows.")
    assert requests[3]["messages"][-1]["content"].startswith(
        "You answered that nothing matches, but @1 is the same query that found no rows before, unchanged: "
        "no rows. Re-run without each filter")
    assert result.answer == "No region sold more than 1000 t." and result.backed_by_query
    assert [(e.check, e.action) for e in result.checks] == [("empty_result", "sent_back")] * 2


def test_mistakes_come_back_to_the_model_as_fixable_messages(data: Path) -> None:
    script = [tool_calls([("describe", {"table": "regions"}), ("query", "{'sql': 'SELECT 1 AS one'}"),
                          ("group", {"source": "regions", "aggregations": [{"func": "sum", "column": "amount"}]})]),
              tool_call("final_answer", {"answer": "1"})]
    _, requests, _ = run(data, script)
    unknown, repaired, column = tool_texts(requests[-1])
    assert unknown.startswith("Error: unknown tool 'describe'. Did you mean 'describe_table'?")
    assert repaired.startswith("result @1")
    assert column == "UnknownColumn: no column 'amount' in the source. Columns: region, sales"


def test_empty_question_sends_nothing(data: Path) -> None:
    with pytest.raises(EmptyQuestion):
        run(data, [], question=" ?? ")


def test_tool_calls_are_traced(data: Path, tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path / "trace.jsonl")
    run(data, [tool_call("query", {"sql": "SELECT 1 AS x"}), tool_call("final_answer", {"answer": "1"})], trace=trace)
    kinds = [e["event"] for e in trace.read()]
    assert kinds[0] == "ask_question" and kinds[-1] == "ask_answer"
    assert kinds.count("tool_call") == 2 and kinds.count("tool_result") == 2


def test_a_query_written_in_a_reply_is_run_for_the_model(data: Path) -> None:
    # The real model (task_retqa_v979) fixed its failing query in a ```sql block and called nothing;
    # the reply was taken as the answer. Now the query runs as `query`, and the model answers from it.
    script = [text("The corrected query:\n\n```sql\nSELECT region FROM regions ORDER BY sales DESC LIMIT 1\n```\n"
                   "After running this query you get the region."),
              tool_call("final_answer", {"answer": "{DATA}", "data": "@1"})]
    result, requests, _ = run(data, script, "Which region sold most?")
    assert result.answer == "Region A0" and result.backed_by_query
    reply, answered = requests[1]["messages"][-2:]  # the reply, as the call it stood for; the call's result
    assert '{"name": "query", "arguments": {"sql": "SELECT region FROM regions ORDER BY sales DESC LIMIT 1"}}' in (
        reply["content"])
    assert ("(Your reply wrote an SQL query instead of calling a tool: it was run for you as query. Next time call "
            "query yourself.)\nresult @1  (query)") in answered["content"]
    assert [s.tool for s in result.steps] == ["query", "final_answer"]
