"""Cheap token estimates for compaction decisions (no tokenizer: it must cost nothing per turn).

Rule: ASCII text ≈ 4 characters per token; every non-ASCII character (CJK above all) counts as
one token, which slightly over-counts Qwen's tokenizer on Chinese (≈1.2–1.5 characters per
token). Over-counting only compacts a little early, which is the safe side.
"""

from __future__ import annotations

import json
from typing import Any

ASCII_CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators of the chat template
IMAGE_TOKENS = 1_300  # one image part (≤ 1280 px long side) in a vision model's prompt, roughly


def estimate_tokens(text: str) -> int:
    """Estimated tokens of one text."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    return -(-ascii_chars // ASCII_CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def estimate_message_tokens(message: dict[str, Any]) -> int:
    """Estimated tokens of one chat message, tool calls included."""
    total = MESSAGE_OVERHEAD_TOKENS + _content_tokens(message.get("content"))
    for call in message.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        total += estimate_tokens(str(function.get("name", ""))) + estimate_tokens(str(function.get("arguments", "")))
    return total


def _content_tokens(content: Any) -> int:
    """Text tokens, plus a flat IMAGE_TOKENS per image part (never the data URL's characters)."""
    if isinstance(content, list):
        return sum(IMAGE_TOKENS if isinstance(part, dict) and part.get("type") == "image_url"
                   else estimate_tokens(str(part.get("text", "") if isinstance(part, dict) else part))
                   for part in content)
    return estimate_tokens(str(content or ""))


def estimate_messages_tokens(messages: list[dict[str, Any]]) -> int:
    """Estimated tokens of a whole conversation."""
    return sum(estimate_message_tokens(m) for m in messages)


def estimate_tools_tokens(tools: list[dict[str, Any]] | None) -> int:
    """Estimated tokens the tool schemas add to every request."""
    return estimate_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0
