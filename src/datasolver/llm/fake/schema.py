"""Schema-filling fake (pydantic-ai's TestModel idea): call every tool with arguments that fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .turns import FakeCall, ToolCalls, Turn, text

_STRING_BY_FORMAT = {"date": "2024-01-01", "date-time": "2024-01-01T00:00:00Z", "email": "a@example.com"}


def fill_schema(schema: dict[str, Any], _root: dict[str, Any] | None = None) -> Any:
    """A minimal value valid for a JSON schema (required properties only, first enum/anyOf option)."""
    root = _root if _root is not None else schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        defs = root.get("$defs") or root.get("definitions") or {}
        return fill_schema(defs.get(name, {}), root)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return fill_schema(options[0], root)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return fill_schema(merged, root)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: fill_schema(props.get(name, {}), root) for name in schema.get("required", [])}
    if kind == "array":
        item = fill_schema(schema.get("items", {}), root)
        return [item] * int(schema.get("minItems", 0))
    if kind == "string":
        if schema.get("format") in _STRING_BY_FORMAT:
            return _STRING_BY_FORMAT[schema["format"]]
        return "a" * max(1, int(schema.get("minLength", 1)))
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0.0))
    if kind == "boolean":
        return False
    return None


def schema_tool_calls(tools: list[dict[str, Any]]) -> ToolCalls:
    """One turn calling every tool in an OpenAI ``tools`` list with schema-filled arguments."""
    calls = []
    for tool in tools:
        function = tool.get("function", {})
        args = fill_schema(function.get("parameters") or {"type": "object"})
        calls.append(FakeCall(function.get("name", ""), args if isinstance(args, dict) else {}))
    return ToolCalls(tuple(calls))


def schema_handler(final_text: str = "done") -> Callable[[dict[str, Any]], Turn]:
    """A ScriptedServer handler: call every offered tool once, then answer ``final_text``."""

    def handle(request: dict[str, Any]) -> Turn:
        messages = request.get("messages") or []
        answered = any(m.get("role") == "tool" for m in messages if isinstance(m, dict))
        tools = request.get("tools") or []
        if tools and not answered:
            return schema_tool_calls(tools)
        return text(final_text)

    return handle
