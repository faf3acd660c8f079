"""The conversation in a form a server without tool-call support accepts.

Two uses: ``tool_mode="text"`` (no ``tools`` field: the tools are described in the system message
and every call and result travels as text), and ``"auto"`` when the model wrote its calls as text
(such a server's template may not render ``tool_calls`` or ``role: "tool"`` messages, so those
calls and their results go back as text too). Calls are written back in the Hermes form
``<tool_call>{…}</tool_call>``; results as ``<tool_response>`` user messages, merged with a
neighbouring user message, because some chat templates insist on alternating roles.
"""

from __future__ import annotations

import json
from typing import Any

from importlib.resources import files

from .text_calls import is_text_call

# The llm room is a leaf (it imports no other room): it reads its one prompt file directly.
_TOOLS_PROMPT = "llm_text_tools.md"
_PLACEHOLDER = "{{tools}}"


def tools_prompt(tools: list[dict[str, Any]]) -> str:
    """The system-message section that describes ``tools`` and how to call them as text."""
    parts = []
    for tool in tools:
        function = tool.get("function") or {}
        schema = json.dumps(function.get("parameters") or {"type": "object"}, ensure_ascii=False)
        parts.append(f"## {function.get('name', '')}\n{(function.get('description') or '').strip()}\n"
                     f"Arguments (JSON schema): {schema}")
    template = (files("datasolver") / "prompts" / _TOOLS_PROMPT).read_text(encoding="utf-8")
    return template.replace(_PLACEHOLDER, "\n\n".join(parts), 1).strip()


def with_tools_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the tools described at the end of the system message (added if none)."""
    section = tools_prompt(tools)
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0].get('content') or ''}\n\n{section}".strip()
        return out
    return [{"role": "system", "content": section}, *out]


def as_text_history(messages: list[dict[str, Any]], *, every_call: bool) -> list[dict[str, Any]]:
    """Calls and results as text: all of them (``every_call``) or only those read from text."""
    if not every_call and not any(
        is_text_call(c.get("id")) for m in messages for c in (m.get("tool_calls") or []) if isinstance(c, dict)
    ):
        return messages
    out: list[dict[str, Any]] = []
    text_ids: set[str] = set()
    merge_next = False  # the last message is a tool response: the next user message joins it
    for message in messages:
        role = message.get("role")
        calls = message.get("tool_calls") or []
        if role == "assistant" and calls and (every_call or all(is_text_call(c.get("id")) for c in calls)):
            text_ids.update(str(c.get("id")) for c in calls)
            written = "\n".join(_written_call(c) for c in calls)
            content = str(message.get("content") or "").strip()
            out.append({"role": "assistant", "content": f"{content}\n{written}".strip()})
        elif role == "tool" and str(message.get("tool_call_id")) in text_ids:
            _add_user(out, f"<tool_response>\n{message.get('content') or ''}\n</tool_response>", True)
            merge_next = True
            continue
        elif role == "user":
            _add_user(out, str(message.get("content") or ""), merge_next)
        else:
            out.append(dict(message))
        merge_next = False
    return out


def _written_call(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = raw  # broken arguments are shown as the model wrote them
    payload = json.dumps({"name": function.get("name", ""), "arguments": args if args is not None else {}},
                         ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def _add_user(out: list[dict[str, Any]], content: str, merge: bool) -> None:
    if merge and out and out[-1].get("role") == "user" and isinstance(out[-1].get("content"), str):
        out[-1] = {**out[-1], "content": f"{out[-1]['content']}\n\n{content}"}
    else:
        out.append({"role": "user", "content": content})
