"""Named errors of the scorer. Each message says what went wrong and what to do next."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class EvalError(DatasolverError):
    """Base class of every error raised by the scorer."""


class CsvFormatError(EvalError):
    """A CSV file breaks the strict reading rules (encoding, header, quoting, field counts)."""


class RaggedRow(CsvFormatError):
    """A data row has a different number of fields than the header; the official scorer gives 0."""

    def __init__(self, message: str, line: int, fields: int, expected: int) -> None:
        super().__init__(message)
        self.line = line
        self.fields = fields
        self.expected = expected


class InvalidGold(EvalError):
    """A gold file is missing or unreadable; the gold set must be fixed before scoring means anything."""


class NoGoldTasks(EvalError):
    """A gold folder holds no `<task>/gold.csv` (nor `output/<task>/gold.csv`)."""


class NoSharedTasks(EvalError, ValueError):
    """Two systems' runs have no scored task in common, so they cannot be compared."""


class InvalidRunFile(EvalError):
    """A results JSON file (from `datasolver eval --json`) is missing, malformed or of another version."""
