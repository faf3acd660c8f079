"""Named errors of the pipeline room. A task's own failure is a record in the summary, never raised."""

from __future__ import annotations

from datasolver.errors import DatasolverError
from datasolver.settings import SettingsError


class PipelineError(DatasolverError):
    """Base class of every error raised by the pipeline room."""


class InputError(PipelineError):
    """The input folder is missing, unreadable, or holds no task folder."""


class RunConfigError(PipelineError, SettingsError):
    """A run setting is out of range (workers below 1, a deadline or budget of 0 seconds or less)."""


class UnknownTasks(PipelineError):
    """`--tasks` names task ids that are not in the input folder; the message lists what is."""


class OutputError(PipelineError):
    """The output, logs or scratch folder cannot be created or written, or overlaps the input."""
