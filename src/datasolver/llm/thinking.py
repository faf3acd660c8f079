"""Separate <think>…</think> reasoning from the answer text."""

from __future__ import annotations

import re

_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
_OPEN = "<think>"
_CLOSE = "</think>"


def split_thinking(text: str | None) -> tuple[str, str]:
    """Return ``(content, reasoning)`` for a raw assistant text.

    Handles closed blocks anywhere, a bare ``</think>`` (chat templates that open the block in the
    prompt, as Qwen's does), and an unclosed ``<think>`` (output cut off mid-thought: all reasoning).
    """
    if not text:
        return "", ""
    reasoning: list[str] = []

    def _keep(match: re.Match[str]) -> str:
        reasoning.append(match.group(1).strip())
        return ""

    rest = _BLOCK.sub(_keep, text)
    lower = rest.lower()
    if _CLOSE in lower:  # the opening tag was in the prompt
        cut = lower.index(_CLOSE)
        reasoning.insert(0, rest[:cut].strip())
        rest = rest[cut + len(_CLOSE):]
        lower = rest.lower()
    if _OPEN in lower:  # never closed
        cut = lower.index(_OPEN)
        reasoning.append(rest[cut + len(_OPEN):].strip())
        rest = rest[:cut]
    return rest.strip(), "\n\n".join(r for r in reasoning if r)
