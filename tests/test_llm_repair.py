"""Tool-argument repair: malformed model output becomes a validated model or a precise message."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from datasolver.llm import parse_tool_arguments
from datasolver.llm.repair import schema_brief
from datasolver.toolkit.tool import unknown_tool_message

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


class Query(BaseModel):
    sql: str
    limit: int = 10


class Options(BaseModel):
    verbose: bool = False


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: Literal["fast", "full"]


REPAIRED = "repaired malformed JSON"
UNWRAPPED = "unwrapped {name, arguments} wrapper"
DECODED = "decoded double-encoded JSON string"
GOOD = {"sql": "SELECT 1"}


@pytest.mark.parametrize(
    ("raw", "repairs"),
    [
        ('{"sql": "SELECT 1"}', []),
        ("{'sql': 'SELECT 1'}", [REPAIRED]),  # single quotes
        ('{"sql": "SELECT 1",}', [REPAIRED]),  # trailing comma
        ('```json\n{"sql": "SELECT 1"}\n```', [REPAIRED]),  # markdown fence
        ('{sql: "SELECT 1"', [REPAIRED]),  # unquoted key, missing brace
        ('{"name": "explore_data", "arguments": {"sql": "SELECT 1"}}', [UNWRAPPED]),
        (json.dumps({"name": "explore_data", "arguments": json.dumps(GOOD)}), [UNWRAPPED, DECODED]),
        (json.dumps({"name": "q", "parameters": GOOD}), ["unwrapped {name, parameters} wrapper"]),
        (json.dumps(json.dumps(GOOD)), [DECODED]),  # double-encoded
        (
            json.dumps({"function": {"name": "q", "arguments": json.dumps(GOOD)}}),
            ["unwrapped {function: {...}} wrapper", UNWRAPPED, DECODED],
        ),
        ('{"sql": "SELECT 1", "note": "x"}', ["ignored unknown field(s): note"]),
    ],
)
def test_repairable_arguments_validate(raw: str, repairs: list[str]) -> None:
    parsed = parse_tool_arguments(raw, Query)
    assert parsed.error is None and parsed.ok
    assert parsed.value == Query(sql="SELECT 1")
    assert parsed.repairs == repairs


def test_valid_arguments_are_coerced_by_pydantic() -> None:
    parsed = parse_tool_arguments('{"sql": "SELECT 1", "limit": "5"}', Query)
    assert parsed.value == Query(sql="SELECT 1", limit=5)


def test_empty_arguments_mean_an_empty_object() -> None:
    parsed = parse_tool_arguments("", Options)
    assert parsed.value == Options()
    assert parsed.repairs == ["empty arguments treated as {}"]


@pytest.mark.parametrize("raw", ["not json at all", "SELECT * FROM t", "None"])
def test_unrepairable_text_gives_a_precise_message(raw: str) -> None:
    parsed = parse_tool_arguments(raw, Query, tool_name="explore_data")
    assert parsed.value is None
    assert parsed.error == (
        f"Error: the arguments for tool 'explore_data' are not valid JSON (received {raw!r}). "
        'Send a JSON object: {"sql": string (required), "limit": integer}'
    )


def test_missing_required_field_names_field_and_schema() -> None:
    parsed = parse_tool_arguments('{"limit": 3}', Query, tool_name="explore_data")
    assert parsed.error == (
        "Error: invalid arguments for tool 'explore_data': missing required field 'sql' (string). "
        'Expected: {"sql": string (required), "limit": integer}. '
        "Fix the arguments and call the tool again."
    )


def test_wrong_type_names_field_and_value() -> None:
    parsed = parse_tool_arguments('{"sql": "x", "limit": "many"}', Query)
    assert parsed.error is not None
    assert "field 'limit': Input should be a valid integer" in parsed.error
    assert '(got "many")' in parsed.error


@pytest.mark.parametrize(("raw", "kind"), [("[1, 2]", "list"), ('"just a string"', "str"), ("42", "int")])
def test_non_object_arguments_are_rejected(raw: str, kind: str) -> None:
    parsed = parse_tool_arguments(raw, Query)
    assert parsed.error is not None
    assert f"must be a JSON object, got {kind}" in parsed.error


def test_forbidden_extra_and_enum_are_explained() -> None:
    parsed = parse_tool_arguments('{"mode": "slow", "x": 1}', Strict)
    assert parsed.error is not None
    assert "field 'mode'" in parsed.error and "unexpected field 'x'" in parsed.error
    assert 'Expected: {"mode": "fast" | "full" (required)}' in parsed.error


def test_schema_brief() -> None:
    assert schema_brief(Query) == '{"sql": string (required), "limit": integer}'


def test_parse_never_raises_on_odd_input() -> None:
    for raw in [None, "{", "}", "\x00", '{"a": [1, {"b": ', "```", "null", "true", "'''"]:
        parsed = parse_tool_arguments(raw, Query)
        assert (parsed.value is None) != (parsed.error is None)


def test_unknown_tool_message_lists_valid_tools_and_nearest() -> None:
    msg = unknown_tool_message("run_solve", ["run_solver", "explore_data", "edit_solver"])
    assert msg == (
        "Error: unknown tool 'run_solve'. Did you mean 'run_solver'? "
        "Valid tools: edit_solver, explore_data, run_solver. Call one of them."
    )
    assert "Did you mean" not in unknown_tool_message("zzz", ["run_solver"])
