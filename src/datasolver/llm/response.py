"""ChatResult, and parsing a chat-completion body into it (tolerant of server quirks)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from .errors import LLMResponseError
from .messages import ToolCall, assistant_message
from .thinking import split_thinking
from .usage import Usage

_BODY_PREVIEW_CHARS = 200


@dataclass
class ChatResult:
    """One model answer. ``content`` has no reasoning in it; ``reasoning`` keeps it for the trace."""

    content: str
    reasoning: str
    tool_calls: list[ToolCall]
    usage: Usage
    latency_s: float = 0.0  # wall time of the whole call, retries and their waits included
    finish_reason: str | None = None
    model: str = ""
    retries_taken: int = 0
    request_id: int = 0  # the id of its request/response events in the trace
    text_form: str | None = None  # how the model wrote its calls when they came as text
    # Prompt tokens the server took from its prefix cache, and (llama.cpp's `timings`) the seconds it
    # spent on the rest of the prompt; None when the server does not say.
    cached_tokens: int = 0
    prefill_s: float | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def prefilled_tokens(self) -> int:
        """Prompt tokens the server had to process (not served from its cache)."""
        return max(0, self.usage.prompt_tokens - self.cached_tokens)

    def assistant_message(self) -> dict[str, Any]:
        """The message to append to history: content "" never null, no reasoning."""
        return assistant_message(self.content, self.tool_calls)


def parse_chat_completion(text: str) -> ChatResult:
    """Parse a non-streaming chat-completion body; raise LLMResponseError when it is unusable."""
    try:
        data = json.loads(text)
    except ValueError:
        raise LLMResponseError(
            f"Response body is not JSON: {text[:_BODY_PREVIEW_CHARS]!r}"
        ) from None
    if not isinstance(data, dict):
        raise LLMResponseError(f"Response body is not a JSON object: {text[:_BODY_PREVIEW_CHARS]!r}")
    choices = data.get("choices")
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        detail = data.get("error") or text[:_BODY_PREVIEW_CHARS]
        raise LLMResponseError(f"Response has no choices: {detail!r}")
    choice = choices[0]
    message = choice.get("message") or {}
    content, think = split_thinking(_text_of(message.get("content")))
    # vLLM/SGLang put separated thinking in reasoning_content (newer vLLM: reasoning).
    separated = _text_of(message.get("reasoning_content") or message.get("reasoning"))
    reasoning = "\n\n".join(part for part in (separated.strip(), think) if part)
    usage_raw = data.get("usage") or {}
    usage = Usage()
    usage.add(_int(usage_raw.get("prompt_tokens")), _int(usage_raw.get("completion_tokens")))
    cached, prefill_s = _prefill(data, usage_raw)
    return ChatResult(
        content=content,
        reasoning=reasoning,
        tool_calls=[_tool_call(c) for c in message.get("tool_calls") or [] if isinstance(c, dict)],
        usage=usage,
        finish_reason=choice.get("finish_reason"),
        model=str(data.get("model") or ""),
        cached_tokens=cached,
        prefill_s=prefill_s,
        raw=data,
    )


def _prefill(data: dict[str, Any], usage: dict[str, Any]) -> tuple[int, float | None]:
    """(cached prompt tokens, prefill seconds): llama.cpp's ``timings`` (``cache_n``, ``prompt_ms``),
    else OpenAI/vLLM's ``usage.prompt_tokens_details.cached_tokens`` and no seconds."""
    timings = data.get("timings")
    if isinstance(timings, dict) and "prompt_ms" in timings:
        ms = timings.get("prompt_ms")
        seconds = float(ms) / 1000 if isinstance(ms, (int, float)) and ms >= 0 else None
        return _int(timings.get("cache_n")), seconds
    details = usage.get("prompt_tokens_details")
    return (_int(details.get("cached_tokens")) if isinstance(details, dict) else 0), None


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = call.get("function") or {}
    args = function.get("arguments")
    if args is None:
        args = ""
    elif not isinstance(args, str):  # some servers send an object; keep it raw text for repair
        args = json.dumps(args, ensure_ascii=False)
    # Servers that omit ids still need one: the tool result must reference it.
    call_id = call.get("id") or f"call_{uuid.uuid4().hex[:12]}"
    return ToolCall(id=str(call_id), name=str(function.get("name") or ""), arguments_raw=args)


def _text_of(content: Any) -> str:
    """Content may be a string, null, or a list of parts ``[{"type": "text", "text": ...}]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
