"""Open a data folder for asking: its catalog, knowledge.md, document tables and knowledge graphs.

DATA_DIR is a task folder (task.json + context/) or any folder of CSV / JSON / SQLite /
documents. Documents become tables through the documents room's deterministic path (pipe tables,
PDF tables; no model), kept in the document cache `datasolver tables` and `datasolver sql` use
(so all of them see the same tables), or written where the caller names; the input is never
written.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.ask.graph import Graph, find_graphs
from datasolver.data import Catalog, DataError, ScratchLayout, TableCache, Task, TaskFolder, load_task
from datasolver.data.files import list_context_files

if TYPE_CHECKING:
    from datasolver.documents.cache import DocumentTables


@dataclass
class DataPackage:
    """Everything the analyst and the MCP server need about one data folder. Close it when done."""

    root: Path
    catalog: Catalog
    knowledge: str = ""
    graphs: list[Graph] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    task_question: str | None = None
    _tmp: Path | None = None
    _docs: DocumentTables | None = None

    def close(self) -> None:
        self.catalog.close()
        if self._docs is not None:
            self._docs.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self) -> DataPackage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_package(
    path: Path | str,
    *,
    cache_dir: Path | str | None = None,
    symmetric: Iterable[str] = (),
    derived_dir: Path | None = None,
    prepare_docs: bool = True,
    doc_cache: str | Path | None = None,
    task: Task | None = None,
    encoding: str | None = None,
    table_cache: TableCache | None = None,
) -> DataPackage:
    """Open `path` (task folder or plain data folder). `derived_dir` receives document tables
    (default: the document cache, `doc_cache` or `$DATASOLVER_DOC_CACHE`, see
    `documents.cache`); `symmetric` names relation types that hold both ways in addition to
    those knowledge.md declares. `task` is the folder's Task when the caller has it (its question
    is the package's; without it a task folder's task.json is read). `encoding` decodes every CSV
    file instead of the encoding chosen by evidence; `table_cache` keeps loaded tables for later
    opens of the same files. Blocking (the documents pass parses PDFs): async code runs it in a
    worker thread (`asyncio.to_thread`)."""
    root = Path(path)
    layout = ScratchLayout(root)
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="datasolver-ask-", dir=cache_dir))
    try:
        context = layout.data_dir()
        files = list_context_files(context)
        knowledge = files.knowledge_text()
        notes: list[str] = []
        extra: list[Path] = []
        docs = None
        own_derived = layout.derived if context != root else None
        if prepare_docs and files.doc and derived_dir is not None:
            notes += _prepare_documents(context, Path(derived_dir))
            if own_derived is None or Path(derived_dir).resolve() != own_derived.resolve():
                extra.append(Path(derived_dir))
        elif prepare_docs and files.doc:
            docs, more = _cached_documents(root, doc_cache)
            notes += more
            extra += docs.extra_derived if docs is not None else []
        try:
            catalog = Catalog.open(root, cache_dir=tmp, extra_derived=extra, encoding=encoding,
                                   table_cache=table_cache)
        except BaseException:
            if docs is not None:
                docs.close()
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    package = DataPackage(root, catalog, knowledge, notes=notes, task_question=task.question if task is not None else _task_question(layout), _tmp=tmp,
                          _docs=docs)
    try:
        package.graphs = find_graphs(catalog, knowledge, symmetric)
    except DataError as exc:
        package.notes.append(f"knowledge-graph tables could not be read: {exc}")
    return package


def _prepare_documents(context: Path, target: Path) -> list[str]:
    """Deterministic document tables into `target`; problems become notes, never failures."""
    from datasolver.documents import DocError, prepare_documents

    try:
        report = prepare_documents(context, target)
    except (DocError, OSError) as exc:
        return [f"documents not read: {exc}"]
    return [f"document {s.source}: {s.reason}" for s in report.skipped] + list(report.warnings)


def _cached_documents(root: Path, doc_cache: str | Path | None) -> tuple[DocumentTables | None, list[str]]:
    """The folder's document tables from the shared document cache; problems become notes."""
    from datasolver.documents import DocError
    from datasolver.documents.cache import document_tables

    try:
        docs = document_tables(root, cache=doc_cache)
    except (DocError, OSError) as exc:
        return None, [f"documents not read: {exc}"]
    notes = [f"document {s.source}: {s.reason}" for s in docs.unread] + docs.warnings + docs.notes
    return docs, notes


def _task_question(folder: TaskFolder) -> str | None:
    if not folder.is_task():
        return None
    try:
        return load_task(folder.root).question
    except DataError:
        return None
