"""Documents → tables: Markdown pipe tables, PDF tables and text (deterministic), narrative prose
(LLM structurizer), relevance votes, and the Solver's document-table hints.

Outputs go to `<task>/derived/` (table files + manifest.json), which data.Catalog registers.
"""

import importlib

from datasolver.documents.errors import DocError
from datasolver.documents.hints import document_table_hints
from datasolver.documents.records import DocReport, PrepareOptions

__all__ = [
    "DocError",
    "DocReport",
    "PrepareOptions",
    "document_table_hints",
    "prepare_documents",
    "prepare_documents_async",
    "tally_votes",
]

# Loaded on first use. The structurizer and the votes talk to a model (the LLM client and its SDK,
# ~0.35 CPU-s), which the deterministic path (`datasolver tables` / `sql` on a folder with
# documents) never needs; the documents pass (its PDF reader and sandbox) runs only when a folder
# has documents not in the document cache, so `sql` on a folder without documents skips it.
_MODEL_NAMES = {"tally_votes": "votes", "prepare_documents": "prepare", "prepare_documents_async": "prepare"}


def __getattr__(name: str) -> object:
    module = _MODEL_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
