"""Plain records passed between the document modules and returned to callers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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
