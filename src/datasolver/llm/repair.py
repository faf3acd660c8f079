"""Tool-argument repair: raw model output → validated pydantic model, or a message for the model.

Never raises on bad model output: the error text is meant to be sent back as the tool result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import json_repair
from pydantic import BaseModel, ValidationError

from .constants import MAX_UNWRAP_DEPTH

# Keys of the wrapper a model leaks when it writes the whole call instead of its arguments.
_WRAPPER_ARGS_KEYS = ("arguments", "parameters", "args")
_PREVIEW_CHARS = 200


@dataclass
class ParsedArgs:
    """Either ``value`` (validated) or ``error`` (text for the model); ``repairs`` lists what was fixed."""

    value: BaseModel | None = None
    error: str | None = None
    repairs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the arguments validated."""
        return self.error is None


def parse_tool_arguments(
    raw: str | None, model: type[BaseModel], *, tool_name: str | None = None
) -> ParsedArgs:
    """Decode, repair, unwrap and validate the ``arguments`` string of one tool call."""
    repairs: list[str] = []
    label = f"tool '{tool_name}'" if tool_name else "this tool"
    text = (raw or "").strip()
    if not text:
        text = "{}"
        repairs.append("empty arguments treated as {}")
    value, decoded = _decode(text, repairs)
    if not decoded:
        return ParsedArgs(
            error=(
                f"Error: the arguments for {label} are not valid JSON "
                f"(received {text[:_PREVIEW_CHARS]!r}). Send a JSON object: {schema_brief(model)}"
            ),
            repairs=repairs,
        )
    value = _unwrap(value, model, repairs)
    if not isinstance(value, dict):
        return ParsedArgs(
            error=(
                f"Error: the arguments for {label} must be a JSON object, got "
                f"{type(value).__name__} {json.dumps(value, ensure_ascii=False)[:_PREVIEW_CHARS]}. "
                f"Expected: {schema_brief(model)}"
            ),
            repairs=repairs,
        )
    ignored = _unknown_keys(value, model)
    try:
        validated = model.model_validate(value)
    except ValidationError as exc:
        return ParsedArgs(error=_validation_message(exc, model, label), repairs=repairs)
    if ignored:
        repairs.append(f"ignored unknown field(s): {', '.join(ignored)}")
    return ParsedArgs(value=validated, repairs=repairs)


def schema_brief(model: type[BaseModel]) -> str:
    """A one-line sketch of the expected object: ``{"sql": string (required), "limit": integer}``."""
    schema = model.model_json_schema()
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        mark = " (required)" if name in required else ""
        parts.append(f'"{name}": {_type_name(prop)}{mark}')
    return "{" + ", ".join(parts) + "}"


# -- steps ---------------------------------------------------------------------------------------


def loads_lenient(text: str) -> Any | None:
    """A model's JSON: strict first, then json-repair (quotes, fences, trailing commas); None when
    it holds none. json-repair answers '' for non-JSON, and any crash of it means "not JSON"."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        value = json_repair.repair_json(text, return_objects=True)
    except Exception:  # json-repair is heuristic: whatever it raises, the text is not JSON to us
        return None
    return None if value == "" else value


def _decode(text: str, repairs: list[str]) -> tuple[Any, bool]:
    """Strict JSON first, json-repair second (noted in `repairs`)."""
    try:
        return json.loads(text), True
    except ValueError:
        pass
    value = loads_lenient(text)
    if value is None:
        return None, False
    repairs.append("repaired malformed JSON")
    return value, True


def _unwrap(value: Any, model: type[BaseModel], repairs: list[str]) -> Any:
    """Peel double encoding and ``{"name": …, "arguments": …}`` leaks, a few layers deep."""
    fields = set(model.model_fields)
    for _ in range(MAX_UNWRAP_DEPTH):
        if isinstance(value, str):
            inner, ok = _decode(value.strip() or '""', repairs)
            if not ok or inner == value:
                return value
            repairs.append("decoded double-encoded JSON string")
            value = inner
            continue
        if isinstance(value, dict) and "function" in value and set(value) <= {"function", "type", "id"}:
            if "function" not in fields and isinstance(value["function"], dict):
                repairs.append("unwrapped {function: {...}} wrapper")
                value = value["function"]
                continue
        if isinstance(value, dict) and "name" in value:
            key = next((k for k in _WRAPPER_ARGS_KEYS if k in value), None)
            if (
                key is not None
                and key not in fields
                and set(value) <= {"name", "type", "id", key}
                and isinstance(value[key], (dict, str))
            ):
                repairs.append(f"unwrapped {{name, {key}}} wrapper")
                value = value[key]
                continue
        return value
    return value


def _unknown_keys(value: dict[str, Any], model: type[BaseModel]) -> list[str]:
    known: set[str] = set()
    for name, info in model.model_fields.items():
        known.update(k for k in (name, info.alias, info.validation_alias) if isinstance(k, str))
    return sorted(k for k in value if k not in known)


def _validation_message(exc: ValidationError, model: type[BaseModel], label: str) -> str:
    schema = model.model_json_schema()
    props = schema.get("properties", {})
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        top = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "missing":
            expected = f" ({_type_name(props[top])})" if top in props else ""
            problems.append(f"missing required field '{loc}'{expected}")
        elif err["type"] == "extra_forbidden":
            problems.append(f"unexpected field '{loc}'")
        else:
            got = json.dumps(err.get("input"), ensure_ascii=False, default=str)[:_PREVIEW_CHARS]
            problems.append(f"field '{loc}': {err['msg']} (got {got})")
    return (
        f"Error: invalid arguments for {label}: {'; '.join(problems)}. "
        f"Expected: {schema_brief(model)}. Fix the arguments and call the tool again."
    )


def _type_name(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"], ensure_ascii=False)
    if "anyOf" in prop:
        return " | ".join(_type_name(p) for p in prop["anyOf"])
    if "$ref" in prop:
        return "object " + prop["$ref"].rsplit("/", 1)[-1]
    kind = prop.get("type", "any")
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_name(prop['items'])}"
    return str(kind)
