"""The deterministic document tables of a raw folder, extracted once into a cache outside it.

`datasolver tables`, `datasolver sql`, `ask` and `mcp` open a task or data folder as it is; the
agent prepares a scratch copy whose `derived/` holds the document tables. So that every command
sees the same tables, the documents pass (`prepare_documents`, no model) runs on first use into
`<cache root>/<folder key>/<content key>/` and later opens reuse it. The input is never written.

- cache root: `$DATASOLVER_DOC_CACHE`, else `$XDG_CACHE_HOME/datasolver/documents`, else
  `~/.cache/datasolver/documents` (the rule every datasolver cache follows: `data/user_cache.py`);
  `off` (or `none`) extracts into a temporary folder removed on `close()`.
- folder key: SHA-256 of the context folder's resolved path; content key: SHA-256 of every
  document's relative path and bytes, the package version and the manifest version, so an edited
  document or a new extractor never reuses old tables. A folder keeps only its newest entry.
- an entry is written into a fresh `mkdtemp` folder (create-exclusive, 0700) and renamed into
  place whole, so a reader sees a complete entry or none; a symlink anywhere in the cache's own
  folders (root, folder key, entry) is never followed, and a cache that cannot be written is not
  an error: that open extracts into a temporary folder instead, with a note.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from datasolver import __version__
from datasolver.data.layout import ScratchLayout
from datasolver.data.user_cache import make_dirs, real_dir, regular_file
from datasolver.data.user_cache import cache_root as user_cache_root
from datasolver.documents.manifest import MANIFEST, VERSION
from datasolver.documents.records import SkippedDocument
from datasolver.documents.sources import Document, file_sha256, find_documents

CACHE_ENV = "DATASOLVER_DOC_CACHE"
REPORT = "report.json"  # skipped documents and warnings of the extraction, kept beside the manifest
STALE_TMP_S = 3600.0
NOT_EXTRACTED = "not read: documents are extracted only when tables are loaded"


@dataclass
class DocumentTables:
    """Where a folder's document tables are (`derived`, for `Catalog.open(extra_derived=…)`),
    which documents gave no table and why, and warnings. Close it to remove a temporary folder."""

    derived: Path | None = None
    unread: list[SkippedDocument] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reused: bool = False
    """True when the tables came from the cache without reading the documents again."""
    _tmp: Path | None = None

    @property
    def extra_derived(self) -> list[Path]:
        return [self.derived] if self.derived is not None else []

    def close(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> DocumentTables:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cache_root(setting: str | Path | None = None) -> Path | None:
    """The cache root for `setting` (a folder, `off`/`none`, or None for `$DATASOLVER_DOC_CACHE`
    and then the user cache folder); None means no cache (a temporary folder per open)."""
    return user_cache_root("documents", CACHE_ENV, setting)


def document_tables(folder: Path | str, *, cache: str | Path | None = None, extract: bool = True) -> DocumentTables:
    """The deterministic document tables of `folder` (a task folder or any data folder).

    A prepared task folder (its own `derived/manifest.json`) needs nothing: the catalog reads it.
    With `extract=False` only a cached entry is used; otherwise every document is listed in
    `unread` with the reason.
    """
    root = Path(folder)
    layout = ScratchLayout(root)
    context = layout.data_dir()
    if context != root and (layout.derived / MANIFEST).is_file():
        result = _from_entry(layout.derived, DocumentTables(reused=True))
        result.derived = None  # the catalog registers a task's own derived/ itself
        return result
    docs = find_documents(context)
    if not docs:
        return DocumentTables()
    result = DocumentTables()
    entry = _cache_entry(cache_root(cache), context, docs, result)
    if entry is not None and _complete(entry):
        result.reused = True
        return _from_entry(entry, result)
    if not extract:
        result.unread = [SkippedDocument(d.source, NOT_EXTRACTED) for d in docs]
        return result
    if entry is not None and _write_entry(context, entry, result):
        return _from_entry(entry, result)
    result._tmp = Path(tempfile.mkdtemp(prefix="datasolver-docs-"))
    _extract(context, result._tmp)
    return _from_entry(result._tmp, result)


def _cache_entry(base: Path | None, context: Path, docs: list[Document], result: DocumentTables) -> Path | None:
    """`<base>/<folder key>/<content key>`, or None without a cache or when a link is in the way (noted)."""
    if base is None:
        return None
    folder_key = hashlib.sha256(str(context.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:32]
    entry = base / folder_key / _content_key(docs)
    for path in (base, entry.parent, entry):
        if real_dir(path) is False:
            result.notes.append(f"document cache: {path} is not a plain folder (a link is never followed); "
                                "tables extracted into a temporary folder")
            return None
    return entry


def _write_entry(context: Path, entry: Path, result: DocumentTables) -> bool:
    """Extract into a fresh folder beside `entry` and rename it into place whole; False (noted)
    when the cache cannot be written, so the caller extracts into a temporary folder instead."""
    try:
        make_dirs(entry.parent)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    except OSError as exc:
        result.notes.append(f"document cache {entry.parent.parent} is not writable ({exc}); tables extracted into a temporary folder")
        return False
    if real_dir(entry) and not _complete(entry):
        shutil.rmtree(entry, ignore_errors=True)  # damaged: an entry is renamed into place only whole
    try:
        _extract(context, tmp)
        try:
            os.rename(tmp, entry)  # atomic; fails when another process put the entry there first
        except OSError:
            if not _complete(entry):
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _drop_stale(entry.parent, keep=entry.name)
    return True


def _complete(entry: Path) -> bool:
    return real_dir(entry) is True and regular_file(entry / MANIFEST)


def _content_key(docs: list[Document]) -> str:
    h = hashlib.sha256(f"datasolver {__version__} manifest {VERSION}\n".encode())
    for doc in docs:
        h.update(f"{doc.source}\0{file_sha256(doc.path)}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:32]


def _extract(context: Path, out_dir: Path) -> None:
    """Run the deterministic documents pass into `out_dir` and keep its report beside the manifest."""
    from datasolver.documents.prepare import prepare_documents  # the PDF reader loads only when needed

    report = prepare_documents(context, out_dir)
    payload = {"skipped": [[s.source, s.reason] for s in report.skipped], "warnings": report.warnings}
    # out_dir is our own fresh folder: exclusive creation never meets an existing file or link.
    with open(out_dir / REPORT, "x", encoding="utf-8") as fh:
        json.dump(payload, fh, ensure_ascii=False)


def _from_entry(entry: Path, result: DocumentTables) -> DocumentTables:
    """Fill `result` from a written entry: the folder, the documents without a table, warnings."""
    result.derived = entry
    try:
        report = json.loads((entry / REPORT).read_text(encoding="utf-8")) if regular_file(entry / REPORT) else None
    except (OSError, ValueError):
        report = None
    if isinstance(report, dict):
        result.unread = [SkippedDocument(str(s), str(r)) for s, r in report.get("skipped", [])]
        result.warnings = [str(w) for w in report.get("warnings", [])]
        return result
    try:  # a prepared task's own derived/: its manifest names the documents that gave no table
        documents = json.loads((entry / MANIFEST).read_text(encoding="utf-8")).get("documents", [])
    except (OSError, ValueError, AttributeError):
        documents = []
    result.unread = [
        SkippedDocument(str(d.get("source")), str(d["skipped"]))
        for d in documents if isinstance(d, dict) and d.get("skipped") and not d.get("tables")
    ]
    return result


def _drop_stale(folder_dir: Path, keep: str) -> None:
    """Remove this folder's older entries (its documents changed) and temporary folders a killed
    process left (older than STALE_TMP_S); links are unlinked, never followed."""
    for child in folder_dir.iterdir():
        if child.name == keep:
            continue
        if child.name.startswith(".tmp-"):
            try:
                if time.time() - os.lstat(child).st_mtime < STALE_TMP_S:
                    continue  # another process may be writing it now
            except OSError:
                continue
        if real_dir(child):
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
