"""Named errors of the agent room. Model misbehaviour is never raised: it ends an attempt."""

from __future__ import annotations

from datasolver.errors import DatasolverError
from datasolver.settings import SettingsError


class AgentError(DatasolverError):
    """Base class of every error raised by the agent room."""


class LimitsError(AgentError, SettingsError):
    """A Limits value is out of range (a programmer's mistake, caught before any work starts)."""
