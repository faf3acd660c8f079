"""The LLM structurizer: narrative documents → one table per document (plan, workers, join, normalize)."""

from datasolver.docs.structurize.limits import StructurizeLimits
from datasolver.docs.structurize.result import Structured
from datasolver.docs.structurize.structurizer import structurize_document

__all__ = ["StructurizeLimits", "Structured", "structurize_document"]
