"""Documents → tables: Markdown pipe tables, PDF tables and text (deterministic), narrative prose
(LLM structurizer), relevance votes, and the Solver's document-table hints.

Outputs go to `<task>/derived/` (table files + manifest.json), which data.Catalog registers.
"""

from datasolver.documents.errors import (
    DocError,
    DocumentSkipped,
    ManifestError,
    NormalizerFailed,
    PlanError,
)
from datasolver.documents.hints import document_table_hints
from datasolver.documents.model import DocReport, PrepareOptions, SkippedDocument, WrittenTable
from datasolver.documents.prepare import prepare_documents, prepare_documents_async
from datasolver.documents.structurize import StructurizeLimits, Structured, structurize_document
from datasolver.documents.votes import VoteTally, tally_votes

__all__ = [
    "DocError",
    "DocReport",
    "DocumentSkipped",
    "ManifestError",
    "NormalizerFailed",
    "PlanError",
    "PrepareOptions",
    "SkippedDocument",
    "StructurizeLimits",
    "Structured",
    "VoteTally",
    "WrittenTable",
    "document_table_hints",
    "prepare_documents",
    "prepare_documents_async",
    "structurize_document",
    "tally_votes",
]
