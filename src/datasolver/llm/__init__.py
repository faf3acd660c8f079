"""The llm room: an OpenAI-compatible async client with traced retries, tool-argument repair,
usage accounting and JSONL traces. ``datasolver.llm.fake`` holds the scripted test server."""

from __future__ import annotations

from .errors import LLMConfigError, LLMContextLengthError, LLMError
from .messages import ToolCall, assistant_message, system_message, tool_message, user_message
from .repair import loads_lenient, parse_tool_arguments
from .response import ChatResult
from .settings import LLMSettings, read_key_file, redact_url
from .window import ServerFacts
from .trace import NULL_TRACE, TraceWriter, read_trace
from .usage import Usage

__all__ = [
    "ChatResult",
    "LLMClient",
    "RequestGate",
    "LLMConfigError",
    "LLMContextLengthError",
    "LLMError",
    "LLMSettings",
    "read_key_file",
    "redact_url",
    "NULL_TRACE",
    "ServerFacts",
    "ToolCall",
    "TraceWriter",
    "Usage",
    "assistant_message",
    "loads_lenient",
    "parse_tool_arguments",
    "read_trace",
    "system_message",
    "tool_message",
    "user_message",
]

# The client imports the OpenAI SDK (~0.3 CPU-s). Most importers of this room (the tool kit, the
# MCP server, a sandbox parent) need only messages, traces and settings: it loads on first use.
_CLIENT_NAMES = ("LLMClient", "RequestGate")


def __getattr__(name: str) -> object:
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
