"""Classify the files of a context folder by kind (csv, json, db, parquet, excel, doc, video, knowledge)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from datasolver.data.compressed import compression, format_suffix
from datasolver.data.input_files import InputScope, read_prepared_record, walk_inputs
from datasolver.data.knowledge_file import KnowledgeFile
from datasolver.data.layout import TaskFolder
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
    ".parquet": "parquet",
    ".xlsx": "excel",
    ".xlsm": "excel",
    ".xls": "excel",
    ".ods": "excel",
    ".dta": "stats",
    ".xpt": "stats",
    ".sas7bdat": "stats",
    ".sav": "stats",
    ".zsav": "stats",
    ".por": "stats",
    ".feather": "arrow",
    ".arrow": "arrow",
    ".orc": "arrow",
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
TABLE_KINDS = ("csv", "json", "db", "parquet", "excel", "stats", "arrow")
COMPRESSED_KINDS = ("csv", "json")  # `x.csv.gz`, `x.jsonl.zst`: read through data/compressed.py


def file_kind(path: Path) -> str | None:
    """The kind a file's name says (None: no table, document or video is read from it); a
    compressed file is of its format's kind when that is CSV/TSV or JSON."""
    kind = KIND_BY_SUFFIX.get(format_suffix(path))
    if compression(path) and kind not in COMPRESSED_KINDS:
        return None
    return kind


@dataclass
class ContextFiles:
    """Every file of a context folder, by kind; paths are absolute, sorted by relative path."""

    root: Path
    csv: list[Path] = field(default_factory=list)
    json: list[Path] = field(default_factory=list)
    db: list[Path] = field(default_factory=list)
    parquet: list[Path] = field(default_factory=list)
    excel: list[Path] = field(default_factory=list)
    stats: list[Path] = field(default_factory=list)  # Stata .dta (pandas), SPSS, SAS (pyreadstat)
    arrow: list[Path] = field(default_factory=list)  # Feather / Arrow IPC, ORC (pyarrow's readers)
    doc: list[Path] = field(default_factory=list)
    video: list[Path] = field(default_factory=list)
    knowledge: Path | None = None
    other: list[Path] = field(default_factory=list)  # no table, document or video is read from these
    hidden: list[Path] = field(default_factory=list)  # names starting with a dot: listed, never loaded
    refused: list[tuple[str, str]] = field(default_factory=list)  # (relative path, why it is not read)

    def knowledge_file(self) -> KnowledgeFile:
        """knowledge.md as read within its cap, in parts (`data.knowledge_file`); empty when none."""
        return KnowledgeFile.read(self.knowledge)

    def knowledge_text(self) -> str:
        """knowledge.md up to its cap (MAX_KNOWLEDGE_BYTES), "" when the folder has none."""
        return self.knowledge_file().text

    def every_file(self) -> list[Path]:
        """Every file listed (whatever its kind, hidden ones and knowledge.md too), not the refused."""
        kinds = (self.csv + self.json + self.db + self.parquet + self.excel + self.stats + self.arrow + self.doc
                 + self.video)
        return sorted(kinds + self.other + self.hidden + ([self.knowledge] if self.knowledge else []))

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


def list_context_files(root: Path, scope: InputScope | None = None) -> ContextFiles:
    """Walk `root` (following the csv/ json/ db/ doc/ video/ layout or files lying loose in it).

    Only files `scope` accepts (default: inside the task folder `root` belongs to, regular) are
    listed; the others are in `refused` with the reason, as are those `prepare` refused for a
    scratch folder. Hidden files and folders (a name starting with a dot) are not loaded but listed
    in `hidden`, so callers can say so; `knowledge.md` at the top is the task knowledge, not a doc.
    """
    found = ContextFiles(root=root)
    if not root.is_dir():
        return found
    task_dir = TaskFolder.of_context(root).root
    walk = walk_inputs(root, scope or InputScope(task_dir))
    found.refused = [(found.relative(p), reason) for p, reason in walk.refused] + (read_prepared_record(task_dir) or [])
    found.refused.sort(key=lambda item: natural_key(item[0]))
    paths = sorted(walk.files, key=lambda p: natural_key(p.relative_to(root).as_posix()))
    for path in paths:
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            found.hidden.append(path)
            continue
        if path.parent == root and path.name.lower() == KNOWLEDGE_FILE:
            found.knowledge = path
            continue
        kind = file_kind(path)
        bucket = getattr(found, kind) if kind else found.other
        bucket.append(path)
    return found
