"""Find the documents of a context folder and read them as text."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from datasolver.data.input_files import walk_inputs
from datasolver.data.layout import OUTPUT_FOLDERS
from datasolver.documents.errors import DocumentSkipped

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)
# knowledge.md describes the data; its own tables are field glossaries, not data.
_NOT_DOCUMENTS = {"knowledge.md"}
# Folders that hold our own or other rooms' outputs, never input documents.
_SKIP_DIRS = OUTPUT_FOLDERS | {"__pycache__", "node_modules"}
MAX_TEXT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Document:
    """One input document: its path and its path relative to the context root (the `source`)."""

    path: Path
    source: str

    @property
    def stem(self) -> str:
        return self.path.stem

    @property
    def is_pdf(self) -> bool:
        return self.path.suffix.lower() in PDF_SUFFIXES


def find_documents(root: Path, *, exclude: Path | None = None) -> list[Document]:
    """Markdown, text and PDF files under `root` (recursively), sorted by relative path.

    Hidden folders, `exclude` (an output folder inside `root`) and knowledge.md are left out, and
    so is every file the data room's input check refuses (a link out of the task, a FIFO, a device).
    """
    root = Path(root)
    excluded = exclude.resolve() if exclude is not None else None
    found: list[Document] = []
    for path in sorted(walk_inputs(root).files):
        rel = path.relative_to(root)
        if any(part.startswith(".") or part in _SKIP_DIRS for part in rel.parts[:-1]):
            continue
        if excluded is not None and (path.resolve() == excluded or excluded in path.resolve().parents):
            continue
        if path.name.startswith(".") or path.name.lower() in _NOT_DOCUMENTS:
            continue
        if path.suffix.lower() not in TEXT_SUFFIXES + PDF_SUFFIXES or not path.is_file():
            continue
        found.append(Document(path=path, source=rel.as_posix()))
    return found


def read_text(path: Path) -> str:
    """Decode a text document: UTF-8 (BOM allowed), then GB18030; line ends made LF."""
    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise DocumentSkipped(f"{path.name} is {size} bytes, over the {MAX_TEXT_BYTES}-byte limit for text documents")
    raw = path.read_bytes()
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:  # pragma: no cover - gb18030 decodes nearly anything
        raise DocumentSkipped(f"{path.name} is neither UTF-8 nor GB18030 text; convert it to UTF-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def file_sha256(path: Path) -> str:
    """Hex digest of a file's bytes (cache keys, manifest freshness)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
