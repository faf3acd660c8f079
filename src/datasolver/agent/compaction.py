"""Compaction: when the history passes the token budget, older turns become a short list of
findings. What survives: the head (rules, knowledge, tables, the question), one progress note
(the question again, the findings, the current solver.py with line hashes), and the latest tool
calls with their results, verbatim. No model call: the summary is built from the turns
themselves, so compaction is deterministic, free and cannot fail.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from datasolver.agent.conversation import Conversation
from datasolver.agent.prompts import render_prompt
from datasolver.agent.tokens import estimate_messages_tokens
from datasolver.clip import clip
from datasolver.llm import user_message

NOTE_CHARS = 300  # one assistant note in the findings
ARGS_CHARS = 400  # one tool call's arguments in the findings
RESULT_LINES = 4  # first lines of a tool result kept in the findings
RESULT_CHARS = 400
NO_FINDINGS = "(nothing recorded yet)"


@dataclass(frozen=True)
class CompactionReport:
    """What one compaction did (for the trace)."""

    tokens_before: int
    tokens_after: int
    messages_dropped: int
    findings_added: int
    forced: bool


def compact(
    conv: Conversation, solver_view: str, *, findings_chars: int = 8_000, tail_chars: int | None = None,
    forced: bool = False,
) -> CompactionReport | None:
    """Fold the turns before the latest tool turn into findings; None when there is nothing to fold.

    How each call reads there is the conversation's `briefs` (set by the loop's `after_call` hook).
    ``tail_chars`` clips each kept tool result (used when even the latest results are too big, e.g.
    after the server said the context is too long).
    """
    before = estimate_messages_tokens(conv.messages)
    start = conv.head_len + (1 if conv.compactions else 0)  # skip the previous progress note
    tail_at = conv.tail_start()
    older = conv.messages[start:tail_at]
    tail = [dict(m) for m in conv.messages[tail_at:]]
    clipped = False
    if tail_chars is not None:
        for message in tail:
            content = message.get("content")
            if message.get("role") == "tool" and isinstance(content, str) and len(content) > tail_chars:
                message["content"] = clip(content, tail_chars, counted=True)
                clipped = True
    if not older and not clipped:
        return None
    added = summarize_turns(older, conv.briefs)
    conv.findings.extend(added)
    note = render_prompt(
        "compaction",
        question=conv.question,
        findings=render_findings(conv.findings, findings_chars),
        solver_py=solver_view,
    )
    conv.replace_body([user_message(note)] + tail)
    conv.compactions += 1
    return CompactionReport(before, estimate_messages_tokens(conv.messages), len(older), len(added), forced)


def summarize_turns(messages: list[dict[str, Any]], briefs: Mapping[str, str] | None = None) -> list[str]:
    """One line per assistant note and per tool call (with the head of its result); ``briefs`` say
    how calls read, by call id (a few words; "" leaves the call out; a call not there shows its JSON)."""
    briefs = briefs or {}
    calls: dict[str, tuple[str, str]] = {}
    lines: list[str] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            text = str(message.get("content") or "").strip()
            if text:
                lines.append(f"- you noted: {clip(' '.join(text.split()), NOTE_CHARS)}")
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                calls[call.get("id", "")] = (str(function.get("name", "")), str(function.get("arguments", "")))
        elif role == "tool":
            call_id = str(message.get("tool_call_id", ""))
            name, args = calls.get(call_id, ("?", ""))
            brief = briefs.get(call_id)
            if brief == "":
                continue
            lines.append(f"- {name} {_brief_args(brief, args)} → {_result_head(str(message.get('content') or ''))}")
    return lines


def render_findings(findings: list[str], max_chars: int) -> str:
    """The newest findings that fit in ``max_chars``, with a count of the dropped older ones."""
    kept: list[str] = []
    used = 0
    for line in reversed(findings):
        if used + len(line) + 1 > max_chars and kept:
            break
        kept.append(line)
        used += len(line) + 1
    kept.reverse()
    dropped = len(findings) - len(kept)
    head = [f"({dropped} older findings dropped)"] if dropped else []
    return "\n".join(head + kept) if kept else NO_FINDINGS


def _brief_args(brief: str | None, raw: str) -> str:
    if brief is not None:
        return clip(brief, ARGS_CHARS)
    try:
        args = json.loads(raw)
    except ValueError:
        return clip(raw, ARGS_CHARS)
    if not isinstance(args, dict):
        return clip(raw, ARGS_CHARS)
    return clip(json.dumps(args, ensure_ascii=False), ARGS_CHARS)


def _result_head(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    head = " | ".join(lines[:RESULT_LINES])
    if len(lines) > RESULT_LINES:
        head += f" | … ({len(lines) - RESULT_LINES} more lines)"
    return clip(head, RESULT_CHARS)
