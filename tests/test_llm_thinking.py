"""Reasoning separation and the history we send back."""

from __future__ import annotations

import pytest

from datasolver.llm import ToolCall
from datasolver.llm.messages import normalize_history
from datasolver.llm.thinking import split_thinking


@pytest.mark.parametrize(
    ("raw", "content", "reasoning"),
    [
        ("plain answer", "plain answer", ""),
        ("<think>step 1</think>\n\nanswer", "answer", "step 1"),
        ("<think>a</think>x<think>b</think>y", "xy", "a\n\nb"),
        ("hidden start</think>answer", "answer", "hidden start"),  # template opened <think>
        ("<think>cut off mid thought", "", "cut off mid thought"),
        ("<THINK>Upper</THINK>ok", "ok", "Upper"),
        ("", "", ""),
        (None, "", ""),
    ],
)
def test_split_thinking(raw: str | None, content: str, reasoning: str) -> None:
    assert split_thinking(raw) == (content, reasoning)


def test_normalize_history_makes_strict_servers_happy() -> None:
    call = ToolCall("c1", "run", '{"a": 1}')
    history = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "reasoning_content": "secret thoughts",
         "tool_calls": [{"id": "c0", "function": {"name": "f", "arguments": {"x": 1}}}, call]},
        {"role": "tool", "tool_call_id": "c0", "content": {"rows": 3}},
        {"role": "assistant", "content": None, "tool_calls": []},
    ]
    out = normalize_history(history)
    assert out[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
            {"id": "c1", "type": "function", "function": {"name": "run", "arguments": '{"a": 1}'}},
        ],
    }
    assert out[2]["content"] == '{"rows": 3}'
    assert out[3] == {"role": "assistant", "content": ""}
    assert history[1]["content"] is None  # the caller's list is not mutated
