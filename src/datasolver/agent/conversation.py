"""Conversation: the message history of one attempt, its fixed head, and the findings that
compaction has folded out of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from datasolver.agent.tokens import estimate_messages_tokens

# Bounds of the calibration: a report outside them is more likely a server quirk than a tokenizer.
MIN_SCALE = 0.5
MAX_SCALE = 3.0


@dataclass
class Conversation:
    """``messages[:head_len]`` (system + task prompt) never changes; the rest grows and is compacted."""

    messages: list[dict[str, Any]]
    question: str
    head_len: int = 0
    findings: list[str] = field(default_factory=list)
    compactions: int = 0
    # The prompt size the server reported for the last request, and how many messages it had.
    reported_tokens: int = 0
    reported_len: int = 0
    # The server's tokens per estimated token, from the last report (our estimate is a rule of
    # thumb; the server's tokenizer and chat template decide).
    scale: float = 1.0
    # How each tool call reads in the findings, by call id (the loop's `after_call` hook set it on
    # the call's outcome): a few words, "" to leave the call out; a call not here shows its JSON.
    briefs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.head_len:
            self.head_len = len(self.messages)

    @classmethod
    def start(cls, opening: list[dict[str, Any]], question: str) -> Conversation:
        """A conversation whose head is the opening messages."""
        return cls(list(opening), question, head_len=len(opening))

    def append(self, *messages: dict[str, Any]) -> None:
        self.messages.extend(messages)

    def append_result(self, message: dict[str, Any], brief: str | None) -> None:
        """Append a tool result; `brief` says how its call reads in the findings (None: its JSON)."""
        if brief is not None:
            self.briefs[str(message.get("tool_call_id", ""))] = brief
        self.messages.append(message)

    def note_reported(self, prompt_tokens: int, sent_len: int, tools_tokens: int = 0) -> None:
        """Remember the server's count for a request that carried ``sent_len`` messages."""
        self.reported_tokens, self.reported_len = prompt_tokens, sent_len
        estimate = estimate_messages_tokens(self.messages[:sent_len]) + tools_tokens
        if prompt_tokens > 0 and estimate > 0:
            self.scale = min(MAX_SCALE, max(MIN_SCALE, prompt_tokens / estimate))

    def estimated_tokens(self, tools_tokens: int = 0) -> int:
        """Our estimate scaled to the server's count, or the server's last count plus the scaled
        estimate of what came since, if larger."""
        estimate = round((estimate_messages_tokens(self.messages) + tools_tokens) * self.scale)
        if self.reported_tokens and self.reported_len <= len(self.messages):
            since = round(estimate_messages_tokens(self.messages[self.reported_len:]) * self.scale)
            return max(estimate, self.reported_tokens + since)
        return estimate

    def head_tokens(self, tools_tokens: int = 0) -> int:
        """Estimated tokens of the fixed head (what compaction can never cut)."""
        return round((estimate_messages_tokens(self.messages[: self.head_len]) + tools_tokens) * self.scale)

    def tail_start(self) -> int:
        """Index of the latest assistant turn with tool calls (kept verbatim by compaction)."""
        for i in range(len(self.messages) - 1, self.head_len - 1, -1):
            message = self.messages[i]
            if message.get("role") == "assistant" and message.get("tool_calls"):
                return i
        return len(self.messages)

    def replace_body(self, body: list[dict[str, Any]]) -> None:
        """Everything after the head becomes ``body``; the server's count no longer applies."""
        self.messages = self.messages[: self.head_len] + body
        self.reported_tokens = self.reported_len = 0
