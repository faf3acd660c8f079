"""Named errors of the solver room. Tool-level problems are returned as values (ToolResult), never raised."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class SolverError(DatasolverError):
    """Base class of every error raised by the solver room."""


class ScaffoldError(SolverError):
    """solver.py (or its pristine copy) cannot be written or restored."""


class UnknownTool(SolverError):
    """A tool name that is not one of the four solver tools (a programmer's mistake)."""
