"""The LLM structurizer: narrative documents → one table per document (plan, workers, join, normalize)."""

from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.documents.structurize.result import Structured
from datasolver.documents.structurize.structurizer import structurize_document

__all__ = ["StructurizeLimits", "Structured", "structurize_document"]
