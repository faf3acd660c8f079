"""Tool calls written as text (`<tool_call>…</tool_call>`): JSON and XML shapes, broken ones."""

from __future__ import annotations

import json

from datasolver.agent import extract_text_tool_calls
from datasolver.llm import parse_tool_arguments
from datasolver.solver.tools import SOLVER_TOOLS

ExploreDataArgs, RunSolverArgs = SOLVER_TOOLS[0].args_model, SOLVER_TOOLS[3].args_model


def test_plain_text_has_no_calls() -> None:
    assert extract_text_tool_calls("All done: prediction.csv is written.") == (
        "All done: prediction.csv is written.", [])


def test_json_shape() -> None:
    content = 'Let me look.\n<tool_call>\n{"name": "explore_data", "arguments": {"query": "\\\\tables"}}\n</tool_call>'
    rest, calls = extract_text_tool_calls(content, start=7)
    assert rest == "Let me look."
    assert [(c.id, c.name) for c in calls] == [("textcall_7", "explore_data")]
    assert json.loads(calls[0].arguments_raw) == {"query": "\\tables"}


def test_several_blocks_and_an_unclosed_last_one() -> None:
    content = (
        '<tool_call>{"name": "read_solver", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "run_solver", "arguments": {"show_rows": 3}}'
    )
    rest, calls = extract_text_tool_calls(content)
    assert rest == ""
    assert [c.name for c in calls] == ["read_solver", "run_solver"]
    assert [c.id for c in calls] == ["textcall_1", "textcall_2"]


def test_xml_shape_values_are_coerced_by_the_args_model() -> None:
    content = (
        "<tool_call>\n<function=run_solver>\n<parameter=show_rows>\n10\n</parameter>\n"
        "<parameter=self_check>\nfalse\n</parameter>\n</function>\n</tool_call>"
    )
    _, [call] = extract_text_tool_calls(content)
    assert call.name == "run_solver"
    parsed = parse_tool_arguments(call.arguments_raw, RunSolverArgs, tool_name=call.name)
    assert parsed.ok and parsed.value.show_rows == 10 and parsed.value.self_check is False


def test_broken_json_keeps_the_name_and_leaves_repair_to_the_parser() -> None:
    content = "<tool_call>{'name': 'explore_data', \"arguments\": {'query': 'SELECT 1',}}</tool_call>"
    _, calls = extract_text_tool_calls(content)
    assert calls[0].name == ""  # single-quoted name: not found by pattern
    content = '<tool_call>{"name": "explore_data", "arguments": {"query": "SELECT 1",}</tool_call>'
    _, [call] = extract_text_tool_calls(content)
    assert call.name == "explore_data"
    parsed = parse_tool_arguments(call.arguments_raw, ExploreDataArgs, tool_name=call.name)
    assert parsed.ok and parsed.value.query == "SELECT 1"
    assert "repaired malformed JSON" in parsed.repairs
