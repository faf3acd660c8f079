"""Chat message shapes: what we send, what goes back into history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Fields some servers add to assistant messages that must not be sent back (reasoning would
# re-enter the prompt and cost tokens; strict servers reject unknown fields).
_RESPONSE_ONLY_FIELDS = ("reasoning_content", "reasoning", "refusal", "annotations", "audio")


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model. Arguments stay raw: repair comes later."""

    id: str
    name: str
    arguments_raw: str
    via: str = "native"  # "text" when read from the reply's content (see ``text_calls``)

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls`` item for this call."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments_raw},
        }


def system_message(content: str) -> dict[str, Any]:
    """A system message."""
    return {"role": "system", "content": content}


def user_message(content: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": content}


def assistant_message(content: str | None, tool_calls: list[ToolCall] | None = None) -> dict[str, Any]:
    """An assistant message for history: content is "" (never null), tool calls in OpenAI shape."""
    message: dict[str, Any] = {"role": "assistant", "content": content or ""}
    if tool_calls:
        message["tool_calls"] = [call.to_openai() for call in tool_calls]
    return message


def tool_message(tool_call_id: str, content: str) -> dict[str, Any]:
    """The result of one tool call, sent back as ``role: "tool"``."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


def normalize_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy of ``messages`` safe to send to a strict OpenAI-compatible server.

    Assistant ``content: null`` becomes "" (llama.cpp rejects null next to tool_calls), response-only
    fields are dropped, dict tool arguments are JSON-encoded and tool contents become strings.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        m = dict(message)
        role = m.get("role")
        if role == "assistant":
            for name in _RESPONSE_ONLY_FIELDS:
                m.pop(name, None)
            if m.get("content") is None:
                m["content"] = ""
            if "tool_calls" in m:
                if m["tool_calls"]:
                    m["tool_calls"] = [_normalize_call(c) for c in m["tool_calls"]]
                else:
                    del m["tool_calls"]  # an empty list upsets some servers
        elif role == "tool" and not isinstance(m.get("content"), str):
            content = m.get("content")
            m["content"] = "" if content is None else json.dumps(content, ensure_ascii=False, default=str)
        out.append(m)
    return out


def _normalize_call(call: Any) -> dict[str, Any]:
    if isinstance(call, ToolCall):
        return call.to_openai()
    c = dict(call)
    function = dict(c.get("function") or {})
    args = function.get("arguments")
    if not isinstance(args, str):
        function["arguments"] = json.dumps(args if args is not None else {}, ensure_ascii=False)
    c["function"] = function
    c.setdefault("type", "function")
    return c
