"""Named errors of the agent room. Model misbehaviour is never raised: it ends an attempt."""

from __future__ import annotations


class AgentError(Exception):
    """Base class of every error raised by the agent room."""


class PromptError(AgentError):
    """A solver prompt file is missing, or a placeholder was left unfilled or given but unused."""


class LimitsError(AgentError):
    """A Limits value is out of range (a programmer's mistake, caught before any work starts)."""
