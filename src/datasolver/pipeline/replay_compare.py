"""Where a replay left its recording: the first model request whose input differs.

Both traces delta-encode request messages (`messages_base`/`messages_from`); this module rebuilds
each request's full message list and compares them in order, after masking what legitimately
differs between two runs (scratch and output folders, timings). The first differing message names
the request number and what changed: a tool's result (with the tool's name), the system prompt,
a user message (checks, send-backs), or the model's own turn.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from datasolver.clip import clip
from datasolver.untrusted_json import as_int, as_list

DIFF_LINES = 8
DIFF_LINE_CHARS = 160
_SCRATCH = re.compile(r"\S*datasolver-scratch-[A-Za-z0-9_]+")
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b")

Normalizer = Callable[[str], str]


@dataclass(frozen=True)
class Divergence:
    """The first request whose input differs from the recording."""

    request: int
    """1-based position of the request among the task's model requests (retries not counted)."""
    what: str
    tool: str | None = None
    diff: str = ""

    def describe(self) -> str:
        return f"diverged at request {self.request}: {self.what}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def make_normalizer(roots: Iterable[str | None]) -> Normalizer:
    """Mask the given folders, any default scratch folder and durations such as `0.42s`."""
    literal = sorted({r.rstrip("/") for r in roots if r and len(r.rstrip("/")) > 1}, key=len, reverse=True)

    def normalize(text: str) -> str:
        for root in literal:
            text = text.replace(root, "<dir>")
        return _TIMING.sub("<t>", _SCRATCH.sub("<dir>", text))

    return normalize


def request_inputs(events: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each model request's full message list, in request order (retries repeat none, so skipped)."""
    by_id: dict[int, list[dict[str, Any]]] = {}
    order: list[int] = []
    for event in events:
        # A retry repeats no messages and has no `messages_from` (whatever its try is called).
        if event.get("event") != "request" or "messages_from" not in event:
            continue
        request_id = as_int(event.get("request_id"))
        base = by_id.get(as_int(event.get("messages_base")), [])
        start = as_int(event.get("messages_from"))
        by_id[request_id] = list(base[:start]) + [m if isinstance(m, dict) else {"content": m}
                                                  for m in as_list(event.get("messages"))]
        order.append(request_id)
    return [by_id[r] for r in order]


def first_divergence(
    old_events: Sequence[dict[str, Any]], new_events: Sequence[dict[str, Any]], normalize: Normalizer
) -> Divergence | None:
    """None when every request the replay made had the recorded input and the counts agree."""
    old, new = request_inputs(old_events), request_inputs(new_events)
    for number, (before, after) in enumerate(zip(old, new), start=1):
        found = _first_different_message(before, after, normalize)
        if found is not None:
            index, old_msg, new_msg = found
            return _describe(number, after if new_msg is not None else before, index, old_msg, new_msg, normalize)
    if len(new) < len(old):
        return Divergence(len(new) + 1, f"the replay stopped after {len(new)} request(s); the recording made "
                                        f"{len(old)}")
    return None


def _first_different_message(
    before: list[dict[str, Any]], after: list[dict[str, Any]], normalize: Normalizer
) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None] | None:
    for index in range(max(len(before), len(after))):
        old_msg = before[index] if index < len(before) else None
        new_msg = after[index] if index < len(after) else None
        if old_msg is None or new_msg is None or _canon(old_msg, normalize) != _canon(new_msg, normalize):
            return index, old_msg, new_msg
    return None


def _describe(
    number: int, messages: list[dict[str, Any]], index: int, old_msg: dict[str, Any] | None,
    new_msg: dict[str, Any] | None, normalize: Normalizer,
) -> Divergence:
    if old_msg is None or new_msg is None:
        have = "fewer" if new_msg is None else "more"
        return Divergence(number, f"the request has {have} messages than recorded (message {index + 1})")
    role = str(new_msg.get("role") or old_msg.get("role") or "?")
    tool = None
    if role == "tool":
        tool = _tool_name(messages[:index], str(new_msg.get("tool_call_id") or ""))
        what = f"the result of {tool or 'a tool'} differs"
    elif role == "system":
        what = "the system prompt differs"
    elif role == "user":
        what = "a user message differs (prompt, check or send-back)"
    else:
        what = f"the {role} message differs"
    before, after = normalize(_text(old_msg)), normalize(_text(new_msg))
    if sorted(before.splitlines()) == sorted(after.splitlines()):
        what += " (the same lines in another order)"  # e.g. rows of a query without ORDER BY
    return Divergence(number, what, tool, _short_diff(before, after))


def _tool_name(history: list[dict[str, Any]], call_id: str) -> str | None:
    for message in reversed(history):
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and call.get("id") == call_id:
                return str((call.get("function") or {}).get("name") or "") or None
    return None


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if message.get("tool_calls"):
        text += "\n" + json.dumps(message["tool_calls"], ensure_ascii=False, sort_keys=True)
    return text


def _canon(message: dict[str, Any], normalize: Normalizer) -> str:
    return normalize(json.dumps(message, ensure_ascii=False, sort_keys=True))


def _short_diff(old: str, new: str) -> str:
    lines = [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), "recorded", "replayed",
                                                    n=0, lineterm="")
             if not line.startswith(("---", "+++", "@@"))]
    clipped = [clip(line, DIFF_LINE_CHARS) for line in lines]
    more = len(clipped) - DIFF_LINES
    return "\n".join(clipped[:DIFF_LINES] + ([f"… {more} more line(s)"] if more > 0 else []))
