"""The scripted OpenAI-compatible model, for tests and the demo. Never talks to a real model.

One model (``ScriptedModel``: script, handler, real-server behaviours, what it received), two
faces: at the client's transport (``ScriptedModel.transport``: no socket) and over HTTP
(``ScriptedServer``: a server on 127.0.0.1, for tests about HTTP, interop, benchmarks, the demo).
"""

from __future__ import annotations

from .schema import fill_schema, schema_handler, schema_tool_calls
from .exchange import ReceivedRequest
from .model import LLAMA_CPP_WORDING, OPENAI_WORDING, SCRIPTED_BASE_URL, ScriptedModel, strict_violations
from .server import ScriptedServer
from .transport import ScriptedTransport
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
    "SCRIPTED_BASE_URL",
    "ScriptedModel",
    "ScriptedServer",
    "ScriptedTransport",
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
