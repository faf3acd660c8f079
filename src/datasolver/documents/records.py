"""Plain records passed between the document modules and returned to callers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datasolver.documents.sources import Document
from datasolver.settings import amount, check_settings, count, setting

if TYPE_CHECKING:
    from datasolver.documents.structurize.limits import StructurizeLimits
    from datasolver.llm.client import LLMClient

DEFAULT_VOTES = 5


@dataclass
class ExtractedTable:
    """One table found in a document, before it is named and written."""

    columns: list[str]
    rows: list[list[str]]
    location: str
    """Where it came from inside the document: "lines 7-414" or "pages 2-3"."""
    method: str
    """"markdown-table", "pdf-table", "pdf-text" or "llm"."""
    key: str | None = None


@dataclass(frozen=True)
class WrittenTable:
    """A document table written under derived/ and listed in the manifest."""

    table: str
    """Source name given to the catalog (document stem or `<stem>_<n>`)."""
    name: str
    """Canonical name the agent queries."""
    file: str
    source: str
    location: str
    method: str
    rows: int
    columns: tuple[str, ...]
    key: str | None = None


@dataclass(frozen=True)
class SkippedDocument:
    """A document that produced no table, with the reason."""

    source: str
    reason: str


@dataclass
class DocReport:
    """What `prepare_documents` did: tables written, documents skipped, warnings."""

    out_dir: Path
    tables: list[WrittenTable] = field(default_factory=list)
    skipped: list[SkippedDocument] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for logs and the CLI."""
        return (
            f"{len(self.tables)} document table(s) written, {len(self.skipped)} document(s) skipped"
            + (f", {len(self.warnings)} warning(s)" if self.warnings else "")
        )


@dataclass(frozen=True)
class PrepareOptions:
    """How `prepare_documents` runs; the defaults are the deterministic path only."""

    llm: LLMClient | None = setting(None, "the model for narrative documents; None (`--no-llm`) runs the "
                                    "deterministic path only")
    knowledge: str | None = setting(None, "the structurizer's naming anchor; None reads `knowledge.md` of the "
                                    "source folder")
    question: str | None = setting(None, "for the relevance votes; None takes task.json's question when "
                                   "preparing a task")
    votes: int = count(DEFAULT_VOTES, "parallel relevance votes per document list (0: structure every narrative "
                       "document)", least=0)
    cache_dir: Path | None = setting(None, "the structurizer's cache; None is `<out_dir>/.cache`")
    limits: StructurizeLimits | None = setting(None, "the structurizer's knobs; None: the defaults")
    deadline: float | None = amount(None, "`time.monotonic()` past which the deterministic pass reads no more "
                                    "(the rest is skipped, said so)", optional=True)

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass
class DocState:
    """What the deterministic pass learned about one document (input to the model's pass)."""

    doc: Document
    sha256: str
    text: str = ""
    unit: str = "lines"
    """How locations are given for this document: "lines" (text) or "pages" (PDF)."""
    n_units: int = 0
    line_pages: list[tuple[int, int]] = field(default_factory=list)
    """For a PDF: the page range of each line of `text`."""
    entries: list[dict[str, Any]] = field(default_factory=list)
