"""The llm room: an OpenAI-compatible async client with traced retries, tool-argument repair,
usage accounting and JSONL traces. ``datasolver.llm.fake`` holds the scripted test server."""

from __future__ import annotations

from .errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfigError,
    LLMConnectionError,
    LLMContextLengthError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMStatusError,
    LLMTimeoutError,
)
from .messages import (
    ToolCall,
    assistant_message,
    normalize_history,
    system_message,
    tool_message,
    user_message,
)
from .repair import ParsedArgs, loads_lenient, parse_tool_arguments, schema_brief
from .response import ChatResult
from .retry import parse_retry_after, retry_delay, should_retry
from .settings import LLMSettings, read_key_file, redact_url
from .text_calls import TextCalls, parse_text_tool_calls
from .text_history import as_text_history, tools_prompt
from .window import ContextLimit, ServerFacts, parse_context_limit
from .thinking import split_thinking
from .trace import NULL_TRACE, NullTrace, TraceWriter, read_trace
from .usage import Usage

__all__ = [
    "ChatResult",
    "ContextLimit",
    "LLMAuthError",
    "LLMBadRequestError",
    "LLMClient",
    "RequestGate",
    "LLMConfigError",
    "LLMConnectionError",
    "LLMContextLengthError",
    "LLMError",
    "LLMRateLimitError",
    "LLMResponseError",
    "LLMServerError",
    "LLMSettings",
    "read_key_file",
    "redact_url",
    "LLMStatusError",
    "LLMTimeoutError",
    "NULL_TRACE",
    "NullTrace",
    "ParsedArgs",
    "ServerFacts",
    "TextCalls",
    "ToolCall",
    "TraceWriter",
    "Usage",
    "as_text_history",
    "assistant_message",
    "chat_sync",
    "normalize_history",
    "parse_context_limit",
    "parse_retry_after",
    "parse_text_tool_calls",
    "loads_lenient",
    "parse_tool_arguments",
    "read_trace",
    "retry_delay",
    "schema_brief",
    "should_retry",
    "split_thinking",
    "system_message",
    "tool_message",
    "tools_prompt",
    "user_message",
]

# The client imports the OpenAI SDK (~0.3 CPU-s). Most importers of this room (the tool kit, the
# MCP server, a sandbox parent) need only messages, traces and settings: it loads on first use.
_CLIENT_NAMES = ("LLMClient", "RequestGate", "chat_sync")


def __getattr__(name: str) -> object:
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
