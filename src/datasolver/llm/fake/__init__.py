"""Scripted OpenAI-compatible fake server, for tests and the demo. Never talks to a real model."""

from __future__ import annotations

from .schema import fill_schema, schema_handler, schema_tool_calls
from .server import ReceivedRequest, ScriptedServer, strict_violations
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
    "ReceivedRequest",
    "ScriptedServer",
    "Text",
    "ToolCalls",
    "Turn",
    "delay",
    "fill_schema",
    "garbage",
    "http_error",
    "schema_handler",
    "schema_tool_calls",
    "strict_violations",
    "text",
    "tool_call",
    "tool_calls",
]
