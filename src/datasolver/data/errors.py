"""Named errors of the data engine. Each message says what went wrong and what to do next."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class DataError(DatasolverError):
    """Base class of every error raised by the data engine."""


class TaskError(DataError):
    """A task folder is malformed (missing or invalid task.json, empty question)."""


class ScratchError(DataError):
    """A task scratch folder is missing or incomplete; run `datasolver prepare` first."""


class SourceSkipped(DataError):
    """A context file could not be read; the catalog records it and loads everything else."""


class SourceStopped(DataError):
    """A file's read ended because the operation was interrupted or timed out (not a bad file)."""


class UnknownTable(DataError):
    """A table name matches no canonical name or alias; the message offers the nearest names."""

    tool_kind = "retry"


class ReadOnlyViolation(DataError):
    """A statement is not allowed on the read-only exploration path (writes, file access, settings)."""


class QueryError(DataError):
    """DuckDB rejected a query; the message is compacted to one actionable line."""

    def __init__(self, message: str, sql: str = "", rewrites: list[str] | None = None,
                 unloaded: list[str] | None = None) -> None:
        super().__init__(message)
        self.sql = sql
        self.rewrites = list(rewrites or [])
        self.unloaded = list(unloaded or [])  # referenced tables that could not be loaded


class SqlSyntaxError(QueryError):
    """SQL that starts with no statement keyword at all (`SELEC * FRM x`): a typo, not a write."""


class QueryInterrupted(QueryError):
    """A query or its table load was stopped (timeout or `Catalog.interrupt()`); the catalog stays usable."""


class ResultTooLarge(DataError):
    """A whole result asked for in a format held in memory is past the byte budget of its rows."""


class CellTooLarge(QueryError):
    """A result cell is over the size a fetched cell may have; refused before it became a Python value."""
