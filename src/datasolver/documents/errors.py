"""Named errors of the document room. Each message says what went wrong and what to do next."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class DocError(DatasolverError):
    """Base class of every error raised while turning documents into tables."""


class DocumentSkipped(DocError):
    """A document could not be read or held no table; the report records it and the rest goes on."""


class PlanError(DocError):
    """The structurizer's planner gave no usable plan (bad JSON, no record ids, no columns)."""


class NormalizerFailed(DocError):
    """A model-written normalization function failed (syntax, exception, timeout, bad output)."""


class ManifestError(DocError):
    """derived/manifest.json is unreadable; delete it and run prepare again."""
