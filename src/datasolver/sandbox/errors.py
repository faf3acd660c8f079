"""Named errors of the sandbox room."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class SandboxError(DatasolverError):
    """The sandbox could not be set up (not: the program failed inside it)."""


class UnsafeFile(DatasolverError):
    """A path the sandbox can write is a symlink, FIFO, folder or oversized file; the parent refuses it."""
