"""A scripted model that writes its tool calls as text, as servers without a tool-call parser do.

``text_writer(handler)`` wraps any ScriptedServer handler that answers in native tool calls: the
request it sees is turned back into native shape (calls written as text in assistant content
become ``tool_calls``, ``<tool_response>`` blocks become ``role: "tool"`` messages, tools described
in the system prompt become a ``tools`` list), and its ``ToolCalls`` answers are written as text
in one of the forms real servers return. ``prose_first`` makes the first answer of each
conversation plain prose with an SQL block, as small models often do.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..text_calls import parse_text_tool_calls
from .turns import Text, ToolCalls, Turn, text

HERMES = "hermes"
FENCED_JSON = "json"
MISTRAL = "mistral"
FUNCTIONS = "functions"
FORMS = (HERMES, FENCED_JSON, MISTRAL, FUNCTIONS)
PROSE_REPLY = ("Looking at the tables, the answer should come from this query:\n\n```sql\n"
               "SELECT * FROM the_table\n```\n\nThat should answer the question.")
_RESPONSE = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.DOTALL)
_TOOL_HEADING = re.compile(r"^## ([A-Za-z_][\w-]*)\s*$", re.MULTILINE)


def write_calls(turn: ToolCalls, form: str) -> str:
    """The calls of ``turn`` written as text in ``form``."""
    calls = [{"name": c.name, "arguments": c.arguments if isinstance(c.arguments, dict) else c.arguments_text()}
             for c in turn.calls]
    if form == HERMES:
        return "\n".join(f"<tool_call>\n{json.dumps(c, ensure_ascii=False)}\n</tool_call>" for c in calls)
    if form == FENCED_JSON:
        payload = calls[0] if len(calls) == 1 else calls
        return f"I will call the tool.\n```json\n{json.dumps(payload, ensure_ascii=False, indent=1)}\n```"
    if form == MISTRAL:
        return "[TOOL_CALLS]" + json.dumps(calls, ensure_ascii=False)
    if form == FUNCTIONS:
        return "\n".join(f"functions.{c['name']}:\n{json.dumps(c['arguments'], ensure_ascii=False)}" for c in calls)
    raise ValueError(f"unknown text-call form {form!r}; use one of {FORMS}")


def native_request(request: dict[str, Any]) -> dict[str, Any]:
    """The request as a native tool-calling server would have seen it."""
    messages: list[dict[str, Any]] = []
    pending: list[str] = []  # ids of calls read from text, waiting for their <tool_response>
    counter = 0
    for message in request.get("messages") or []:
        role, content = message.get("role"), message.get("content")
        if role == "assistant" and not message.get("tool_calls") and isinstance(content, str):
            found = parse_text_tool_calls(content)
            if found.calls:
                calls = []
                for call in found.calls:
                    counter += 1
                    calls.append({"id": f"written_{counter}", "type": "function",
                                  "function": {"name": call.name, "arguments": call.arguments_raw}})
                pending = [c["id"] for c in calls]
                messages.append({"role": "assistant", "content": found.content, "tool_calls": calls})
                continue
        if role == "user" and isinstance(content, str) and pending and _RESPONSE.search(content):
            for call_id, result in zip(pending, _RESPONSE.findall(content)):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
            pending = []
            rest = _RESPONSE.sub("", content).strip()
            if rest:
                messages.append({"role": "user", "content": rest})
            continue
        messages.append(dict(message))
    native = dict(request, messages=messages)
    if not native.get("tools"):
        system = next((m.get("content") for m in messages if m.get("role") == "system"), "") or ""
        native["tools"] = [{"type": "function", "function": {"name": n}} for n in _TOOL_HEADING.findall(system)]
    return native


def text_writer(
    handler: Callable[[dict[str, Any]], Turn],
    *,
    forms: Sequence[str] = (HERMES, FENCED_JSON),
    prose_first: bool = False,
    conversation_key: Callable[[dict[str, Any]], str] | None = None,
) -> Callable[[dict[str, Any]], Turn]:
    """A handler that answers like ``handler`` but writes its calls as text, cycling ``forms``.

    The form of a reply is chosen by how many calls the conversation already holds, so one
    conversation uses every form in turn. With ``prose_first`` the first request offering tools of
    every conversation (by ``conversation_key``, default the first user message) gets ``PROSE_REPLY``.
    """
    seen: set[str] = set()
    lock = threading.Lock()
    key_of = conversation_key or _first_user_message

    def handle(request: dict[str, Any]) -> Turn:
        native = native_request(request)
        if prose_first and native.get("tools"):  # only conversations that offer tools
            key = key_of(request)
            with lock:
                first = key not in seen
                seen.add(key)
            if first:
                return text(PROSE_REPLY)
        turn = handler(native)
        if not isinstance(turn, ToolCalls):
            return turn
        done = sum(len(m.get("tool_calls") or []) for m in native["messages"] if m.get("role") == "assistant")
        return Text(write_calls(turn, forms[done % len(forms)]))

    return handle


def _first_user_message(request: dict[str, Any]) -> str:
    for message in request.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
