"""Scripted OpenAI-compatible fake server, for tests and the demo. Never talks to a real model."""

from __future__ import annotations

from .schema import fill_schema, schema_handler, schema_tool_calls
from .server import LLAMA_CPP_WORDING, OPENAI_WORDING, ReceivedRequest, ScriptedServer, strict_violations
from .text_writer import native_request, text_writer, write_calls
from .turns import (
    Delay,
    FakeCall,
    Garbage,
    HttpError,
    Text,
    ToolCalls,
    Turn,
    delay,
    garbage,
    http_error,
    text,
    tool_call,
    tool_calls,
)

__all__ = [
    "Delay",
    "FakeCall",
    "Garbage",
    "HttpError",
    "LLAMA_CPP_WORDING",
    "OPENAI_WORDING",
    "ReceivedRequest",
    "ScriptedServer",
    "Text",
    "ToolCalls",
    "Turn",
    "delay",
    "fill_schema",
    "garbage",
    "http_error",
    "native_request",
    "schema_handler",
    "schema_tool_calls",
    "strict_violations",
    "text",
    "text_writer",
    "tool_call",
    "tool_calls",
    "write_calls",
]
