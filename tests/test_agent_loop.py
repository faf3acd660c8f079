"""The tool-calling loop against the scripted model (at the client's transport): a full solve,
repaired and broken tool JSON, unknown tools, tool calls written as text, a 429 mid-conversation,
the request cap, compaction."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from datasolver.agent import Limits, solve_task
from datasolver.agent.assemble import build_messages
from datasolver.agent.brief import gather_brief
from datasolver.agent.solve import SolveOutcome
from datasolver.agent.tokens import estimate_messages_tokens
from tests.helpers.agent import edit_query_turn, fake_client, query_line, task_run
from datasolver.agent.tokens import estimate_tools_tokens
from datasolver.data import Catalog, ScratchLayout
from datasolver.llm import TraceWriter
from datasolver.llm.fake import ScriptedModel, garbage, http_error, text, tool_call, tool_calls
from datasolver.solver import tool_schemas
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import TINY_QUESTION, make_tiny_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

COUNT_BY_CITY = 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city")'
EXPECTED_CSV = "city,n\nParis,2\nLyon,1\nNice,1\n"
ONE_ATTEMPT = Limits(max_attempts=1)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script=None, handler=None, limits: Limits = Limits(), send_backs: int = 0,
          **client_settings):
    """Run solve_task against the scripted model (at the transport); return (outcome, server, trace events).

    Replies without a tool call end the attempt here (``send_backs=0``) unless a test asks."""
    limits = dataclasses.replace(limits, send_backs=send_backs)
    trace = TraceWriter(scratch.parent.parent / "logs", "task_tiny")
    with ScriptedModel(script, handler) as server:
        async def go() -> SolveOutcome:
            async with fake_client(server, trace, **client_settings) as client:
                return await solve_task(task_run(scratch, client, scratch.parent.parent / "out", limits))

        outcome = asyncio.run(go())
    assert server.errors == []  # every request was one a strict server accepts
    return outcome, server, trace.read()


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_full_solve_explore_read_edit_run_answer(scratch: Path) -> None:
    script = [
        tool_calls([("explore_data", {"query": "\\tables"}), ("read_solver", {})]),
        edit_query_turn(scratch, COUNT_BY_CITY),
        tool_call("run_solver", {}),
        text("prediction.csv holds the order count per city."),
    ]
    outcome, server, events = solve(scratch, script)
    assert (outcome.status, outcome.attempts, outcome.requests, outcome.reason) == ("solved", 1, 4, None)
    assert outcome.prediction == scratch.parent.parent / "out" / "task_tiny" / "prediction.csv"
    assert outcome.prediction.read_text(encoding="utf-8") == EXPECTED_CSV
    assert outcome.usage["requests"] == 4 and outcome.usage["prompt_tokens"] > 0
    first = server.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["explore_data", "read_solver", "edit_solver", "run_solver"]
    results = tool_results(server.requests[-1])
    assert results[0].startswith("tables: 2") and "orders\tcsv" in results[0]
    number, digest = query_line(scratch)
    assert f"{number}:{digest}|result = None" in results[1]
    assert results[2].startswith(f"Replaced line {number} with 1 line")
    assert results[3].splitlines()[:2] == ["OK", "prediction.csv: 3 rows × 2 columns"]
    [attempt] = outcome.attempt_results
    assert (attempt.ended, attempt.tool_calls, attempt.final_text) == (
        "answered", 4, "prediction.csv holds the order count per city.")
    kinds = [e["event"] for e in events]
    assert kinds.count("tool_call") == 4 and kinds.count("tool_result") == 4
    assert kinds.index("prediction_published") < kinds.index("solve_end")


def test_malformed_tool_json_is_repaired(scratch: Path) -> None:
    script = [tool_call("explore_data", "{'query': 'SELECT count(*) AS n FROM orders',}"), text("done")]
    outcome, server, events = solve(scratch, script, limits=ONE_ATTEMPT)
    [result] = tool_results(server.requests[1])
    assert result.startswith("rows: 1 of 1") and "\n4" in result
    assert "(note: your arguments were repaired: repaired malformed JSON" in result
    [call] = [e for e in events if e["event"] == "tool_call"]
    assert call["arguments"]["query"] == "SELECT count(*) AS n FROM orders"
    assert "repaired malformed JSON" in call["repairs"] and call["error"] is None
    assert outcome.attempt_results[0].tool_kinds == {"ok": 1}


def test_unrepairable_json_is_reported_and_the_model_recovers(scratch: Path) -> None:
    script = [
        tool_call("explore_data", "this is not json"),
        tool_call("explore_data", {"query": "SELECT count(*) AS n FROM cities"}),
        text("done"),
    ]
    outcome, server, events = solve(scratch, script, limits=ONE_ATTEMPT)
    bad, good = tool_results(server.requests[2])
    assert bad.startswith("Error: the arguments for tool 'explore_data' are not valid JSON")
    assert '"query": string (required)' in bad
    assert good.startswith("rows: 1 of 1")
    assert outcome.attempt_results[0].tool_kinds == {"bad_arguments": 1, "ok": 1}
    assert [e["error"] is not None for e in events if e["event"] == "tool_call"] == [True, False]


def test_unknown_tool_gets_the_valid_names(scratch: Path) -> None:
    script = [tool_call("run_sql", {"sql": "SELECT 1"}), text("done")]
    outcome, server, _ = solve(scratch, script, limits=ONE_ATTEMPT)
    [result] = tool_results(server.requests[1])
    assert result.startswith("Error: unknown tool 'run_sql'.")
    assert "Valid tools: edit_solver, explore_data, read_solver, run_solver." in result
    assert outcome.attempt_results[0].tool_kinds == {"unknown_tool": 1}


def test_tool_calls_written_as_text_are_run(scratch: Path) -> None:
    number, digest = query_line(scratch)
    edit = json.dumps({"name": "edit_solver", "arguments": {
        "start_line": number, "start_hash": digest, "new_content": COUNT_BY_CITY}})
    script = [
        text(f"I will edit the query.\n<tool_call>\n{edit}\n</tool_call>"),
        text("<tool_call>\n<function=run_solver>\n<parameter=show_rows>\n2\n</parameter>\n</function>\n</tool_call>"),
        text("done"),
    ]
    outcome, server, events = solve(scratch, script)
    assert outcome.status == "solved" and outcome.prediction.read_text(encoding="utf-8") == EXPECTED_CSV
    history = server.requests[2]["messages"]
    # Calls read from text go back as text (such a server's template may not take tool_calls).
    assistant = history[2]
    assert assistant["content"].startswith("I will edit the query.\n<tool_call>") and "tool_calls" not in assistant
    assert all(m["role"] != "tool" for m in history)
    assert history[3]["role"] == "user" and history[3]["content"].startswith("<tool_response>")
    assert history[-1]["content"].startswith("<tool_response>\nOK") and "first 2 rows" in history[-1]["content"]
    assert [e["names"] for e in events if e["event"] == "text_tool_calls"] == [["edit_solver"], ["run_solver"]]
    assert [e["form"] for e in events if e["event"] == "text_tool_calls"] == ["hermes", "hermes"]
    calls = [e for e in events if e["event"] == "tool_call"]
    assert [c["via"] for c in calls] == ["text", "text"] and calls[0]["call_id"].startswith("textcall_")


def test_a_429_mid_conversation_is_survived(scratch: Path) -> None:
    script = [
        edit_query_turn(scratch, COUNT_BY_CITY),
        http_error(429, retry_after=0),
        tool_call("run_solver", {}),
        text("done"),
    ]
    outcome, server, _ = solve(scratch, script)
    assert outcome.status == "solved" and outcome.requests == 3
    assert outcome.usage["retries"] == 1 and len(server.requests) == 4


def test_request_cap_ends_each_attempt(scratch: Path) -> None:
    limits = Limits(max_requests_per_attempt=3, max_attempts=2)
    outcome, server, _ = solve(scratch, handler=lambda body: tool_call("explore_data", {"query": "SELECT 1 AS x"}),
                               limits=limits)
    assert len(server.requests) == 6 and outcome.requests == 6
    assert [a.ended for a in outcome.attempt_results] == ["request_cap", "request_cap"]
    # The only query that returned rows answers through the scaffold (the must-submit fallback).
    assert outcome.status == "fallback" and outcome.prediction.read_text(encoding="utf-8") == "x\n1\n"
    assert outcome.reason == ("attempt 2 ended (request_cap) without prediction.csv; "
                              "fallback ran the last explore query that returned rows")


def _head_tokens(scratch: Path) -> int:
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        opening = build_messages(gather_brief(ScratchLayout.of(scratch), catalog))
    return estimate_messages_tokens(opening) + estimate_tools_tokens(tool_schemas())


BIG_QUERY = "SELECT i, repeat('x', 60) AS pad_{n} FROM range(80) t(i)"


def test_older_turns_are_compacted_over_the_token_budget(scratch: Path) -> None:
    budget = _head_tokens(scratch) + 3_000  # room for about two big results
    script = [tool_call("explore_data", {"query": BIG_QUERY.format(n=n), "limit": 80}) for n in range(1, 7)]
    script += [text("done")]
    outcome, server, events = solve(scratch, script, limits=Limits(max_attempts=1, context_token_budget=budget))
    [attempt] = outcome.attempt_results
    assert attempt.compactions >= 2
    compacted = [r for r in server.requests[1:] if r["messages"][2]["content"].startswith("# Progress so far")]
    assert compacted, "no request carried a progress note"
    last = server.requests[-1]["messages"]
    assert last[:2] == server.requests[0]["messages"][:2]  # rules, knowledge, tables, question intact
    note = last[2]["content"]
    assert TINY_QUESTION in note
    assert "pad_1 FROM range(80) t(i) → rows: 80 of 80" in note  # a finding from the oldest turn
    assert "|result = None" in note  # the current solver.py, with hashes
    assert last[-1]["role"] == "tool" and "pad_6" in last[-1]["content"] and last[-1]["content"].count("\n") > 80
    assert len(last) == 5  # head, note, latest call, latest result
    assert all(estimate_messages_tokens(r["messages"]) < budget + 1_500 for r in server.requests)
    assert sum(e["event"] == "compaction" for e in events) == attempt.compactions


def test_context_length_error_compacts_and_retries(scratch: Path) -> None:
    overflow = http_error(400, body={"error": {"message": "This model's maximum context length is 32768 tokens"}})
    script = [tool_call("explore_data", {"query": BIG_QUERY.format(n=n), "limit": 80}) for n in range(1, 4)]
    script += [overflow, text("done")]
    outcome, server, events = solve(scratch, script, limits=ONE_ATTEMPT)
    [attempt] = outcome.attempt_results
    assert (attempt.ended, attempt.error, attempt.requests) == ("answered", None, 5)
    retried = server.requests[4]["messages"]
    assert retried[2]["content"].startswith("# Progress so far") and len(retried) == 5
    assert any(e["event"] == "compaction" for e in events)
    [shrink] = [e for e in events if e["event"] == "context_shrink"]
    assert shrink["limit"] == 32768 and shrink["tokens_after"] <= shrink["target"] < shrink["tokens_before"]
    assert server.requests[4] != server.requests[3]  # never re-sent unchanged


def _cut_off_reply() -> object:
    body = {"id": "x", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4096}}
    return garbage(json.dumps(body))  # any 200 body: here a well-formed completion the helpers cannot make


def test_a_reply_cut_off_by_the_token_limit_is_not_an_answer(scratch: Path) -> None:
    script = [_cut_off_reply(), _cut_off_reply(), _cut_off_reply()]
    outcome, server, events = solve(scratch, script, limits=Limits(max_attempts=1, cut_off_retries=2))
    [attempt] = outcome.attempt_results
    assert (attempt.cut_offs, attempt.requests, attempt.ended) == (2, 3, "answered")
    nudge = server.requests[1]["messages"][-1]
    assert nudge["role"] == "user" and nudge["content"].startswith("Your last reply was cut off")
    assert sum(e["event"] == "cut_off" for e in events) == 2
