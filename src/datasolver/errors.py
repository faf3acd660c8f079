"""The one error root, the one prompt error and the one JSON error shape.

Every room's named errors derive from `DatasolverError`, so an interface catches one type: the
CLI prints it as `Error: …` with exit code 1, MCP and `ask --json` print `error_record`. A leaf
module: it imports nothing of datasolver, so every room may import it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal


class DatasolverError(Exception):
    """Base of every error datasolver raises for a person to read (not a programmer's mistake)."""

    tool_kind: ClassVar[Literal["retry", "failed"]] = "failed"
    """What a tool answers when this error ends its call: "failed" (adapt) or "retry" (a name or
    reference the model can correct). Read by the tool kit's one exception → kind table."""


class ToolRetry(DatasolverError):
    """A mistake the model can fix (a name, a reference, an argument's value): sent back as a retry."""

    # A tool raises it and the model reads its message as "fix your arguments and retry"
    # (pydantic-ai's `ModelRetry`). Any exception that is no `DatasolverError` is ours: an internal
    # error, traced and never sent to the model as its mistake.

    tool_kind = "retry"


class PromptError(DatasolverError):
    """A prompt file is missing, or a placeholder was left unfilled or given but unused."""


def error_record(kind: str, message: str) -> dict[str, Any]:
    """`{"ok": false, "error": <kind>, "message": <text>}`: the one JSON error of tools, `ask --json` and MCP."""
    return {"ok": False, "error": kind, "message": message}


def error_shape(exc: BaseException) -> dict[str, Any]:
    """The JSON error for an exception: its type name and message."""
    return error_record(type(exc).__name__, str(exc))
