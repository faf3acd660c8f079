"""Named errors of the ask room, and the one error shape every interface prints."""

from __future__ import annotations

from typing import Any


class AskError(Exception):
    """Base class of every error raised by the ask room."""


class EmptyQuestion(AskError):
    """The question is empty (or only noise) after cleaning; nothing is sent to the model."""


class UnknownResult(AskError):
    """A result reference (`@N`, `latest`) names no stored result; the message lists the valid ones."""


class ReservedName(AskError):
    """SQL or an argument spells an internal result-view name; results are referred to as `@N` only."""


class GoldenSetError(AskError):
    """A golden-set question file is missing, malformed, or names a data folder that does not exist."""


class PromptError(AskError):
    """A prompt file is missing, or a placeholder was left unfilled or given but unused."""


def error_record(error: str, message: str) -> dict[str, Any]:
    """`{"ok": false, "error": <kind>, "message": <text>}`: the one JSON error of `ask --json` and MCP."""
    return {"ok": False, "error": error, "message": message}


def error_shape(exc: BaseException) -> dict[str, Any]:
    """The JSON error for an exception: its type name and message."""
    return error_record(type(exc).__name__, str(exc))


class UnknownColumn(AskError):
    """A column named in a tool's arguments is not in its source; the message lists the columns."""


class UnknownRelation(AskError):
    """A relation type or knowledge graph that the data does not have; the message lists the valid ones."""
