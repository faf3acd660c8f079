"""Token estimates, Limits, and compaction of older turns into findings."""

from __future__ import annotations

import json

import pytest

from datasolver.agent import Deadline, Limits
from datasolver.agent.compaction import compact
from datasolver.agent.conversation import Conversation
from datasolver.agent.errors import LimitsError
from datasolver.agent.tokens import estimate_tokens
from datasolver.agent.compaction import render_findings, summarize_turns
from datasolver.llm import ToolCall, assistant_message, system_message, user_message
from datasolver.solver.tools import SOLVER_TOOLS
from datasolver.solver.tools import SOLVER_HOOKS
from datasolver.toolkit import CallHooks, ToolOutcome

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport


def test_token_estimate_counts_cjk_per_character() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("成交均价") == 4
    assert estimate_tokens("SELECT 成交均价") == 2 + 4


def test_limits_are_validated() -> None:
    assert Limits().max_requests_per_attempt == 80 and Limits().max_attempts == 5
    with pytest.raises(LimitsError, match="max_attempts"):
        Limits(max_attempts=0)
    assert Limits(tool_timeout_s=0.25).tool_timeout_s == 0.25  # fractions of a second, for fast tests
    for bad in (0, -1.0, True):
        with pytest.raises(LimitsError, match="tool_timeout_s"):
            Limits(tool_timeout_s=bad)
    assert Deadline(0.0).expired()
    assert not Deadline().expired() and Deadline().seconds_left() is None


def add_turn(conv: Conversation, n: int, name: str, args: dict, result: str, hooks: CallHooks = SOLVER_HOOKS) -> None:
    """One tool turn as the loop appends it: the call, then its result with how the hooks read it."""
    call = ToolCall(f"c{n}", name, json.dumps(args))
    tool = next((t for t in SOLVER_TOOLS if t.name == name), None)
    outcome = ToolOutcome(call.id, name, result, True, "ok", [], tool=tool)
    hooks.after_call(tool, call, outcome)
    conv.append(assistant_message(f"step {n}", [call]))
    conv.append_result(outcome.message(), outcome.brief)


def conversation(turns: int) -> Conversation:
    conv = Conversation.start([system_message("rules"), user_message("task: which city?")], "which city?")
    for n in range(1, turns + 1):
        add_turn(conv, n, "explore_data", {"query": f"SELECT {n} FROM orders"}, f"rows: 1 of 1\nx\n{n}\n" + "y\n" * 300)
    return conv


def test_compaction_keeps_head_note_and_latest_tool_turn() -> None:
    conv = conversation(4)
    latest = conv.messages[-2:]
    report = compact(conv, "40:NT|result = run_sql('SELECT 1')")
    assert report is not None and report.messages_dropped == 6 and report.findings_added == 6
    assert report.tokens_after < 0.6 * report.tokens_before
    messages = conv.messages
    assert [m["role"] for m in messages] == ["system", "user", "user", "assistant", "tool"]
    assert messages[:2] == [system_message("rules"), user_message("task: which city?")]
    note = messages[2]["content"]
    assert "which city?" in note
    assert "- explore_data SELECT 1 FROM orders → rows: 1 of 1 | x | 1" in note
    assert "- you noted: step 3" in note
    assert "40:NT|result = run_sql('SELECT 1')" in note
    assert messages[3:] == latest  # the latest call and result, verbatim


def test_second_compaction_accumulates_findings() -> None:
    conv = conversation(3)
    compact(conv, "v1")
    add_turn(conv, 4, "explore_data", {"query": "SELECT 4"}, "rows: 0 of 0")
    add_turn(conv, 5, "read_solver", {}, "1:AA|...")
    report = compact(conv, "v2")
    assert report is not None and conv.compactions == 2
    note = conv.messages[2]["content"]
    assert "SELECT 1 FROM orders" in note and "SELECT 3 FROM orders" in note and "SELECT 4 → rows: 0 of 0" in note
    assert "read_solver" not in note  # superseded by the current solver.py
    assert "v2" in note and "v1" not in note
    assert sum(1 for m in conv.messages if m["role"] == "user") == 2


def test_nothing_to_compact_returns_none_unless_clipping() -> None:
    conv = conversation(1)
    assert compact(conv, "v") is None
    report = compact(conv, "v", tail_chars=100, forced=True)
    assert report is not None and report.forced
    assert conv.messages[-1]["content"].endswith("characters cut)")


def test_findings_keep_the_newest_within_budget() -> None:
    findings = [f"- finding {i} " + "x" * 50 for i in range(10)]
    text = render_findings(findings, 200)
    assert text.startswith("(7 older findings dropped)") and "finding 9" in text and "finding 6" not in text
    assert render_findings([], 100) == "(nothing recorded yet)"


def _summary(name: str, args: dict, result: str) -> list[str]:
    conv = Conversation.start([], "q")
    add_turn(conv, 1, name, args, result)
    return summarize_turns(conv.messages, conv.briefs)[1:]  # after the note "step 1"


def test_summary_of_an_edit_names_lines_not_code() -> None:
    lines = _summary("edit_solver", {"start_line": 40, "start_hash": "NT", "new_content": "x = 1"},
                     "Replaced line 40 with 1 line")
    assert lines == ["- edit_solver (lines 40–40) → Replaced line 40 with 1 line"]


def test_summary_of_an_sql_edit_names_the_query_area_not_missing_lines() -> None:
    # Before: "(lines None–None)", as an edit by `sql` has no line numbers.
    sent = {"sql": "SELECT 1", "start_line": 3}  # the line fields beside `sql` are ignored by the tool too
    lines = _summary("edit_solver", sent, "Query area set")
    assert lines == ["- edit_solver (the query area's query) → Query area set"]


def test_the_findings_follow_the_loops_hooks_not_the_tools_names() -> None:
    def after(tool, call, outcome):  # how these calls read: "peek" left out, "note" in a few words
        outcome.brief = "" if call.name == "peek" else f"«{json.loads(call.arguments_raw)['text'][:5]}»"

    hooked, plain = Conversation.start([], "q"), Conversation.start([], "q")
    for conv, hooks in ((hooked, CallHooks(after_call=after)), (plain, CallHooks())):
        add_turn(conv, 1, "peek", {}, "state", hooks)
        add_turn(conv, 2, "note", {"text": "abcdefgh"}, "noted", hooks)
    assert summarize_turns(hooked.messages, hooked.briefs) == [
        "- you noted: step 1", "- you noted: step 2", "- note «abcde» → noted"]
    assert summarize_turns(plain.messages, plain.briefs) == summarize_turns(plain.messages) == [
        "- you noted: step 1", "- peek {} → state", "- you noted: step 2", '- note {"text": "abcdefgh"} → noted']
