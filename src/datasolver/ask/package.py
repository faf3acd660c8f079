"""Open a data folder for asking: its catalog, knowledge.md, document tables and knowledge graphs.

DATA_DIR is a task folder (task.json + context/) or any folder of CSV / JSON / SQLite /
documents. Documents become tables through the documents room's deterministic path (pipe tables,
PDF tables; no model), written to a private temporary folder unless the caller names one, so
the input is never written.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from datasolver.ask.graph import Graph, find_graphs
from datasolver.data import Catalog, DataError, load_task
from datasolver.data.files import list_context_files

DERIVED_DIR = "derived"


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

    def close(self) -> None:
        self.catalog.close()
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
) -> DataPackage:
    """Open `path` (task folder or plain data folder). `derived_dir` receives document tables
    (default: a temporary folder removed on close); `symmetric` names relation types that hold
    both ways in addition to those knowledge.md declares."""
    root = Path(path)
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="datasolver-ask-", dir=cache_dir))
    try:
        context = root / "context" if (root / "context").is_dir() else root
        files = list_context_files(context)
        knowledge = files.knowledge.read_text(encoding="utf-8", errors="replace") if files.knowledge else ""
        notes: list[str] = []
        extra: list[Path] = []
        own_derived = root / DERIVED_DIR if context != root else None
        if prepare_docs and files.doc and not (own_derived is not None and own_derived.is_dir() and derived_dir is None):
            target = Path(derived_dir) if derived_dir is not None else tmp / DERIVED_DIR
            notes += _prepare_documents(context, target)
            if own_derived is None or target.resolve() != own_derived.resolve():
                extra.append(target)
        catalog = Catalog.open(root, cache_dir=tmp, extra_derived=extra)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    package = DataPackage(root, catalog, knowledge, notes=notes, task_question=_task_question(root), _tmp=tmp)
    try:
        package.graphs = find_graphs(catalog, knowledge, symmetric)
    except DataError as exc:
        package.notes.append(f"knowledge-graph tables could not be read: {exc}")
    return package


def _prepare_documents(context: Path, target: Path) -> list[str]:
    """Deterministic document tables into `target`; problems become notes, never failures."""
    from datasolver.documents import DocError, prepare_documents

    def run() -> list[str]:
        report = prepare_documents(context, target)
        return [f"document {s.source}: {s.reason}" for s in report.skipped] + list(report.warnings)

    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run()
        # Called from async code (an MCP server, a test): prepare_documents runs its own loop.
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(run).result()
    except (DocError, OSError) as exc:
        return [f"documents not read: {exc}"]


def _task_question(root: Path) -> str | None:
    if not (root / "task.json").is_file():
        return None
    try:
        return load_task(root).question
    except DataError:
        return None
