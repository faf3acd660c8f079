"""Tool calls written as text, in every common form; and the history sent back as text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.llm import parse_tool_arguments
from datasolver.llm.text_calls import parse_text_tool_calls
from datasolver.llm.text_history import as_text_history, tools_prompt
from datasolver.llm.text_calls import FORM_BARE, FORM_FUNCTIONS, FORM_HERMES, FORM_JSON, FORM_MISTRAL
from pydantic import BaseModel

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

NAMES = {"explore_data", "read_solver", "edit_solver", "run_solver"}


class ExploreDataArgs(BaseModel):
    query: str
    limit: int = 50


class RunSolverArgs(BaseModel):
    show_rows: int = 5
    self_check: bool = True


def _calls(content: str, names=NAMES):
    found = parse_text_tool_calls(content, tool_names=names)
    return found, [(c.name, json.loads(c.arguments_raw) if c.arguments_raw.strip().startswith("{") else c.arguments_raw)
                   for c in found.calls]


def test_plain_text_has_no_calls() -> None:
    found = parse_text_tool_calls("All done: prediction.csv is written.", tool_names=NAMES)
    assert (found.content, found.calls, found.form) == ("All done: prediction.csv is written.", [], None)


def test_hermes_json_shape_with_ids_and_via() -> None:
    content = 'Let me look.\n<tool_call>\n{"name": "explore_data", "arguments": {"query": "\\\\tables"}}\n</tool_call>'
    found = parse_text_tool_calls(content, id_prefix="textcall_7_")
    assert found.content == "Let me look." and found.form == FORM_HERMES
    assert [(c.id, c.name, c.via) for c in found.calls] == [("textcall_7_1", "explore_data", "text")]
    assert json.loads(found.calls[0].arguments_raw) == {"query": "\\tables"}


def test_several_hermes_blocks_and_an_unclosed_last_one() -> None:
    content = (
        '<tool_call>{"name": "read_solver", "arguments": {}}</tool_call>\n'
        '<tool_call>{"name": "run_solver", "arguments": {"show_rows": 3}}'
    )
    found, calls = _calls(content)
    assert found.content == ""
    assert calls == [("read_solver", {}), ("run_solver", {"show_rows": 3})]
    assert [c.id for c in found.calls] == ["textcall_1", "textcall_2"]


def test_hermes_xml_shape_values_are_coerced_by_the_args_model() -> None:
    content = (
        "<tool_call>\n<function=run_solver>\n<parameter=show_rows>\n10\n</parameter>\n"
        "<parameter=self_check>\nfalse\n</parameter>\n</function>\n</tool_call>"
    )
    [call] = parse_text_tool_calls(content).calls
    assert call.name == "run_solver"
    parsed = parse_tool_arguments(call.arguments_raw, RunSolverArgs, tool_name=call.name)
    assert parsed.ok and parsed.value.show_rows == 10 and parsed.value.self_check is False


def test_broken_hermes_json_keeps_the_name_and_leaves_repair_to_the_parser() -> None:
    content = "<tool_call>{'name': 'explore_data', \"arguments\": {'query': 'SELECT 1',}}</tool_call>"
    assert parse_text_tool_calls(content).calls[0].name == ""  # single-quoted name: unreadable
    content = '<tool_call>{"name": "explore_data", "arguments": {"query": "SELECT 1",}</tool_call>'
    [call] = parse_text_tool_calls(content).calls
    assert call.name == "explore_data"
    parsed = parse_tool_arguments(call.arguments_raw, ExploreDataArgs, tool_name=call.name)
    assert parsed.ok and parsed.value.query == "SELECT 1"
    assert "repaired malformed JSON" in parsed.repairs


@pytest.mark.parametrize("content", [
    'I will query it.\n```json\n{"name": "explore_data", "arguments": {"query": "SELECT 1"}}\n```',
    '```json\n{"name": "explore_data", "parameters": {"query": "SELECT 1"}}\n```\nThen I check.',
    '```\n[{"name": "explore_data", "arguments": {"query": "SELECT 1"}}]\n```',
    '{"name": "explore_data", "arguments": {"query": "SELECT 1"}}',
    'Next: {"name": "explore_data", "arguments": {"query": "SELECT 1"}}',
    '{"type": "function", "function": {"name": "explore_data", "arguments": "{\\"query\\": \\"SELECT 1\\"}"}}',
])
def test_fenced_and_bare_json(content: str) -> None:
    found, calls = _calls(content)
    assert found.form == FORM_JSON
    assert calls == [("explore_data", {"query": "SELECT 1"})]
    assert "explore_data" not in found.content


def test_unmarked_json_needs_a_known_tool_and_both_keys() -> None:
    assert parse_text_tool_calls('```json\n{"name": "Alice", "age": 3}\n```', tool_names=NAMES).calls == []
    assert parse_text_tool_calls('{"name": "lookup", "arguments": {}}', tool_names=NAMES).calls == []


@pytest.mark.parametrize("content", [
    '[TOOL_CALLS][{"name": "explore_data", "arguments": {"query": "SELECT 1"}}]',
    '[TOOL_CALLS] [{"name": "explore_data", "arguments": {"query": "SELECT 1"}, "id": "abc123def"}]',
    '[TOOL_CALLS]explore_data[ARGS]{"query": "SELECT 1"}',
])
def test_mistral(content: str) -> None:
    found, calls = _calls(content)
    assert found.form == FORM_MISTRAL and calls == [("explore_data", {"query": "SELECT 1"})]


def test_mistral_several_named_calls() -> None:
    found, calls = _calls('[TOOL_CALLS]read_solver[ARGS]{}[TOOL_CALLS]run_solver[ARGS]{"show_rows": 2}')
    assert calls == [("read_solver", {}), ("run_solver", {"show_rows": 2})]


@pytest.mark.parametrize("content", [
    'functions.explore_data: {"query": "SELECT 1"}',
    'I need the data.\nfunctions.explore_data:\n{"query": "SELECT 1"}',
    'functions.explore_data({"query": "SELECT 1"})',
    'functions.explore_data:\n```json\n{"query": "SELECT 1"}\n```',
])
def test_functions_prefix(content: str) -> None:
    found, calls = _calls(content)
    assert found.form == FORM_FUNCTIONS and calls == [("explore_data", {"query": "SELECT 1"})]
    assert "functions." not in found.content and "SELECT" not in found.content


def test_text_history_writes_calls_and_results_as_text_and_merges_user_turns() -> None:
    history = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "textcall_3_1", "type": "function", "function": {"name": "read_solver", "arguments": "{}"}},
            {"id": "textcall_3_2", "type": "function", "function": {"name": "run_solver", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "textcall_3_1", "content": "1:AB|x"},
        {"role": "tool", "tool_call_id": "textcall_3_2", "content": "OK"},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "run_solver", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "native"},
    ]
    out = as_text_history(history, every_call=False)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant", "tool"]
    assert "tool_calls" not in out[2] and out[2]["content"].count("<tool_call>") == 2
    assert out[3]["content"].count("<tool_response>") == 2 and out[3]["content"].endswith("go on")
    assert out[4]["tool_calls"][0]["id"] == "call_9"  # native calls stay native in auto mode
    every = as_text_history(history, every_call=True)
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in every)
    # What we write back reads back as the same calls.
    again = parse_text_tool_calls(every[2]["content"], tool_names=NAMES)
    assert [c.name for c in again.calls] == ["read_solver", "run_solver"]


def test_tools_prompt_lists_every_tool_and_the_call_format() -> None:
    tools = [{"type": "function", "function": {"name": "explore_data", "description": "Run SQL.",
                                               "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]
    prompt = tools_prompt(tools)
    assert "## explore_data" in prompt and "Run SQL." in prompt and '"query"' in prompt and "<tool_call>" in prompt


# -- a query written in a reply with no call (the real small model's habit) ---------------------

from datasolver.llm.text_calls import written_query  # noqa: E402


@pytest.mark.parametrize("reply, query", [
    ("The answer:\n```sql\nSELECT title FROM paper WHERE year = 2020 ORDER BY title ASC\n```\nDone.",
     "SELECT title FROM paper WHERE year = 2020 ORDER BY title ASC"),
    ("```sql\nSELECT count(*) FROM paper;\nSELECT title FROM paper;\n```", "SELECT title FROM paper"),
    ("```python\nresult = run_sql(\"SELECT title FROM paper WHERE year = 2020\")\n```",
     "SELECT title FROM paper WHERE year = 2020"),
    ('```python\ndf = run_sql("""\nWITH t AS (SELECT 1 AS a)\nSELECT a FROM t\n""")\nresult = df\n```',
     "WITH t AS (SELECT 1 AS a)\nSELECT a FROM t"),
    ("first\n```sql\nSELECT 1\n```\nthen the final one\n```sql\n-- final\nSELECT 2\n```", "SELECT 2"),
    ("```\nSELECT name FROM author\n```", "SELECT name FROM author"),
])
def test_a_written_query_is_read_from_sql_and_python_blocks(reply: str, query: str) -> None:
    assert written_query(reply) == query


@pytest.mark.parametrize("reply", [
    "```python\nresult = None\n```",
    "```python\nimport pandas as pd\nresult = pd.read_csv('/data/papers.csv')\n```",
    "I will first look at the paper table, then filter by year and sort the titles.",
    "| Result |\n|---|\n| Adaptive Joins |",
    "```sql\nSELECT title FROM paper WHERE year = 2020",  # cut off: no closing fence
    "```sql\nDROP TABLE paper\n```",
    "```json\n{\"sql\": \"SELECT 1\"}\n```",
])
def test_no_query_is_read_from_code_without_one(reply: str) -> None:
    assert written_query(reply) is None


TOOLS = ("explore_data", "read_solver", "edit_solver", "run_solver")


def test_a_small_models_copied_calls_are_read_as_calls() -> None:
    # The real Qwen2.5-Coder-1.5B reply after run_solver's NO OUTPUT showed calls to copy.
    fixtures = json.loads((Path(__file__).parent / "fixtures" / "small_model_replies.json").read_text("utf-8"))
    found = parse_text_tool_calls(fixtures["bare_calls_copied"]["reply"], tool_names=TOOLS)
    assert found.form == FORM_BARE
    assert [c.name for c in found.calls] == ["explore_data", "edit_solver"]
    assert json.loads(found.calls[0].arguments_raw) == {"query": "SELECT * FROM cite LIMIT 5"}
    assert json.loads(found.calls[1].arguments_raw)["sql"].startswith("SELECT title, COUNT(*)")
    assert found.content == "To look at the likeliest table first:"


@pytest.mark.parametrize("content", [
    "explore_data {\"query\": \"SELECT 1\"}",        # without tool names nothing is read this way
])
def test_bare_calls_need_the_tool_names(content: str) -> None:
    assert parse_text_tool_calls(content).calls == []


@pytest.mark.parametrize("content", [
    "I will use explore_data {\"query\": \"SELECT 1\"} next.",   # not at the start of a line
    "write_file {\"path\": \"x\"}",                             # not one of the tools
    "explore_data {not json}",                                  # no argument object
])
def test_bare_calls_are_known_names_at_a_line_start_with_an_object(content: str) -> None:
    assert parse_text_tool_calls(content, tool_names=TOOLS).calls == []


def test_calls_inside_an_echoed_tool_result_are_not_the_models() -> None:
    echoed = ('<tool_response>\nNO OUTPUT\nReady to copy:\nedit_solver {"sql": "SELECT <columns> FROM paper"}\n'
              'explore_data {"query": "SELECT * FROM paper LIMIT 5"}\n</tool_response>')
    names = {"edit_solver", "explore_data", "run_solver"}
    assert parse_text_tool_calls(echoed, tool_names=names).calls == []
    cut_off = echoed.removesuffix("\n</tool_response>")  # a reply cut inside the echo
    assert parse_text_tool_calls(cut_off, tool_names=names).calls == []
    after = parse_text_tool_calls(echoed + '\n<tool_call>{"name": "run_solver", "arguments": {}}</tool_call>',
                                  tool_names=names)
    assert [c.name for c in after.calls] == ["run_solver"]


def test_a_run_sql_line_in_a_block_labelled_sql_gives_its_query() -> None:
    # The real 1.5B model wrote this after NO OUTPUT (task_en_scholar_12, 2026-12-02).
    reply = '<tool_response>\nNO OUTPUT\n```sql\nresult = run_sql("SELECT COUNT(*) FROM paper WHERE year = 2020")\n```'
    assert written_query(reply) == "SELECT COUNT(*) FROM paper WHERE year = 2020"


def test_reply_query_reads_a_sql_block_or_a_query_wrapped_in_a_written_call() -> None:
    from datasolver.llm.text_calls import reply_query, same_query

    assert reply_query("```sql\nSELECT 1;\n```") == "SELECT 1"
    # What the real 1.5B model wrote when asked for a query (recorded, issue 35): a call as a JSON block.
    wrapped = '```json\n{\n  "name": "query",\n  "arguments": {\n    "sql": "SELECT city_name FROM city"\n  }\n}\n```'
    assert reply_query(wrapped) == "SELECT city_name FROM city"
    assert reply_query("I would look at the tables first.") is None
    assert same_query("select 1;", "SELECT   1") and not same_query("SELECT 1", "SELECT 2")


def test_same_query_compares_quoted_text_as_written() -> None:
    # Fixing the case of a filter value is what an empty result's diagnosis asks for: it is a new query.
    from datasolver.llm.text_calls import same_query

    assert not same_query("SELECT a FROM t WHERE r = 'north'", "SELECT a FROM t WHERE r = 'North'")
    assert not same_query('SELECT "Name" FROM t', 'SELECT "name" FROM t')
    assert same_query("select A from T where r = 'it''s';", "SELECT a FROM t WHERE r = 'it''s'")
