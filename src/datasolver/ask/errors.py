"""Named errors of the ask room (the one error shape every interface prints lives in datasolver.errors)."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class AskError(DatasolverError):
    """Base class of every error raised by the ask room."""


class EmptyQuestion(AskError):
    """The question is empty (or only noise) after cleaning; nothing is sent to the model."""


class UnknownResult(AskError):
    """A result reference (`@N`, `latest`) names no stored result; the message lists the valid ones."""

    tool_kind = "retry"


class ReservedName(AskError):
    """SQL or an argument spells an internal result-view name; results are referred to as `@N` only."""

    tool_kind = "retry"


class GoldenSetError(AskError):
    """A golden-set question file is missing, malformed, or names a data folder that does not exist."""


class UnknownColumn(AskError):
    """A column named in a tool's arguments is not in its source; the message lists the columns."""

    tool_kind = "retry"


class UnknownRelation(AskError):
    """A relation type or knowledge graph that the data does not have; the message lists the valid ones."""

    tool_kind = "retry"
