"""Classify the files of a context folder by kind (csv, json, db, doc, video, knowledge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from datasolver.data.names import natural_key

KIND_BY_SUFFIX = {
    ".csv": "csv",
    ".tsv": "csv",
    ".json": "json",
    ".jsonl": "json",
    ".ndjson": "json",
    ".db": "db",
    ".sqlite": "db",
    ".sqlite3": "db",
    ".md": "doc",
    ".markdown": "doc",
    ".txt": "doc",
    ".pdf": "doc",
    ".mp4": "video",
    ".mov": "video",
    ".webm": "video",
    ".mkv": "video",
    ".avi": "video",
}
KNOWLEDGE_FILE = "knowledge.md"


@dataclass
class ContextFiles:
    """Every file of a context folder, by kind; paths are absolute, sorted by relative path."""

    root: Path
    csv: list[Path] = field(default_factory=list)
    json: list[Path] = field(default_factory=list)
    db: list[Path] = field(default_factory=list)
    doc: list[Path] = field(default_factory=list)
    video: list[Path] = field(default_factory=list)
    knowledge: Path | None = None
    other: list[Path] = field(default_factory=list)
    hidden: list[Path] = field(default_factory=list)  # names starting with a dot: listed, never loaded

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def list_context_files(root: Path) -> ContextFiles:
    """Walk `root` (following the csv/ json/ db/ doc/ video/ layout or files lying loose in it).

    Hidden files and folders (a name starting with a dot) are not loaded but listed in `hidden`, so
    callers can say so; `knowledge.md` at the top is the task knowledge, not a doc.
    """
    found = ContextFiles(root=root)
    if not root.is_dir():
        return found
    paths = sorted((p for p in root.rglob("*") if p.is_file()), key=lambda p: natural_key(p.relative_to(root).as_posix()))
    for path in paths:
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            found.hidden.append(path)
            continue
        if path.parent == root and path.name.lower() == KNOWLEDGE_FILE:
            found.knowledge = path
            continue
        kind = KIND_BY_SUFFIX.get(path.suffix.lower())
        bucket = getattr(found, kind) if kind else found.other
        bucket.append(path)
    return found
