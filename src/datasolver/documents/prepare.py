"""prepare_documents: every document of a folder → table files + manifest in an output folder.

The deterministic path (pipe tables, PDF tables and text) always runs; the LLM structurizer runs
for narrative documents only when `PrepareOptions.llm` is given. Outputs go to the scratch area only.
One async entry (`prepare_documents_async`) and one sync entry (`prepare_documents`), over the same
blocking steps (read the documents, write the manifest) and, with a model, its async pass.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from datasolver import safe_write
from datasolver.data.errors import TaskError
from datasolver.data.files import list_context_files
from datasolver.data.input_files import mark_prepared
from datasolver.data.layout import ScratchLayout
from datasolver.data.names import canonical_name
from datasolver.data.tasks import load_task
from datasolver.documents.errors import DocError, DocumentSkipped, ManifestError
from datasolver.documents.manifest import VERSION, load_manifest, save_manifest, write_table
from datasolver.documents.markdown import extract_markdown
from datasolver.documents.records import DocReport, DocState, PrepareOptions, SkippedDocument, WrittenTable
from datasolver.documents.pdf import DEADLINE_PASSED, PdfExtraction, extract_pdf, read_pdfs
from datasolver.documents.sources import Document, file_sha256, find_documents, read_text

TEXT_DIR = "text"
# Below this much prose a document without tables is a note, not a data source.
MIN_NARRATIVE_CHARS = 80


def prepare_documents(
    folder: ScratchLayout | Path, out_dir: Path | None = None, options: PrepareOptions | None = None
) -> DocReport:
    """The synchronous entry (see `prepare_documents_async` for what it does). Without a model it
    is plain blocking work, inside a running event loop too; with a model it runs the async entry
    in an event loop of its own, so inside a running loop await `prepare_documents_async` instead."""
    options = options or PrepareOptions()
    if options.llm is None:
        work = _read_documents(folder, out_dir, options)
        _keep_previous_llm_tables(work.old, work.narrative, work.out_dir, work.used, work.report)
        return _write_manifest(work)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(prepare_documents_async(folder, out_dir, options))
    raise DocError("prepare_documents with a model was called inside a running event loop; "
                   "await prepare_documents_async instead")


async def prepare_documents_async(
    folder: ScratchLayout | Path, out_dir: Path | None = None, options: PrepareOptions | None = None
) -> DocReport:
    """Documents → table files + manifest.json (the asynchronous entry: reading documents and
    writing tables run in a worker thread, the model's requests on the caller's loop).

    With `out_dir=None`, `folder` is a task scratch dir (or its layout): documents of
    `<task>/context/` go to `<task>/derived/`, and the question defaults to task.json's (callers
    that hold the task's `Task` pass its question, so the file is not read again). Otherwise every document under
    `folder` goes to `out_dir`. `options.knowledge` defaults to the source folder's knowledge.md
    (the structurizer's naming anchor).

    Idempotent: files from an earlier run that are no longer produced are removed; tables the
    model produced earlier are kept while their document is unchanged, even without a model.
    """
    options = options or PrepareOptions()
    work = await asyncio.to_thread(_read_documents, folder, out_dir, options)
    if work.options.llm is not None and work.narrative:
        from datasolver.documents.llm_pass import structure_documents

        await structure_documents(work.options.llm, work.narrative, work.out_dir, work.used, work.report, work.options)
    else:
        await asyncio.to_thread(_keep_previous_llm_tables, work.old, work.narrative, work.out_dir, work.used,
                                work.report)
    return await asyncio.to_thread(_write_manifest, work)


@dataclass
class _Pass:
    """One pass over a folder's documents between reading them and writing the manifest."""

    out_dir: Path
    options: PrepareOptions
    report: DocReport
    old: dict[str, Any]
    used: set[str]
    states: list[DocState]

    @property
    def narrative(self) -> list[DocState]:
        """Documents the deterministic path found no table in (the model's, when there is one)."""
        return [s for s in self.states if not s.entries]


def _read_documents(folder: ScratchLayout | Path, out_dir: Path | None, options: PrepareOptions) -> _Pass:
    """Resolve the folders and run the deterministic path on every document (blocking)."""
    layout = folder if isinstance(folder, ScratchLayout) else ScratchLayout(Path(folder))
    source_dir, task = layout.root, None
    if out_dir is None:
        task, source_dir = source_dir, layout.context
        if not source_dir.is_dir():
            raise DocError(f"{task} has no context/ folder; run prepare on the task first, or give an output folder")
        out_dir = layout.derived
        mark_prepared(task)  # a derived/ of a task folder is read only where the program wrote it
        if options.question is None:
            options = replace(options, question=_question_of(task))
    out_dir = Path(out_dir)
    if not source_dir.is_dir():
        raise DocError(f"{source_dir} is not a folder; give the folder that holds the documents")
    # derived/ of a folder someone else made may be a link: refused (UnsafeWrite), never followed.
    safe_write.make_folders(out_dir, base=out_dir if task is None else task)
    if options.knowledge is None:  # the input check's knowledge.md (never a link out), within its cap
        options = replace(options, knowledge=list_context_files(source_dir).knowledge_text() or None)
    report = DocReport(out_dir=out_dir)
    try:
        old = load_manifest(out_dir)
    except ManifestError as exc:
        report.warnings.append(f"{exc}; starting a fresh manifest")
        old = {"tables": [], "documents": []}
    work = _Pass(out_dir, options, report, old, set(), [])
    docs = find_documents(source_dir, exclude=out_dir)
    pdfs = [d for d in docs if d.is_pdf]  # one sandboxed reader for all of them, within the deadline
    read = dict(zip((d.source for d in pdfs), read_pdfs([d.path for d in pdfs], options.deadline)))
    for doc in docs:
        state = _extract(doc, out_dir, work.used, report, options.deadline, read.get(doc.source))
        if state is not None:
            work.states.append(state)
    return work


def _write_manifest(work: _Pass) -> DocReport:
    """Note the documents still without a table, drop stale files, write the manifest (blocking)."""
    report, states, out_dir = work.report, work.states, work.out_dir
    for s in work.narrative:
        reason = (
            "no table found (narrative text; configure a model to structure it)"
            if work.options.llm is None else "no table found and the model produced none"
        )
        if not any(k.source == s.doc.source for k in report.skipped):
            report.skipped.append(SkippedDocument(s.doc.source, reason))

    manifest = {
        "version": VERSION,
        "tables": [e for s in states for e in s.entries],
        "documents": [_document_entry(s, report) for s in states]
        + [{"source": k.source, "skipped": k.reason} for k in report.skipped if k.source not in {s.doc.source for s in states}],
    }
    _remove_stale_files(work.old, manifest, out_dir)
    save_manifest(out_dir, manifest)
    report.tables = [_written(e) for e in manifest["tables"]]
    return report


def _question_of(task: Path) -> str | None:
    try:
        return load_task(task).question
    except TaskError:
        return None


def _extract(doc: Document, out_dir: Path, used: set[str], report: DocReport,
             deadline: float | None = None, pdf: PdfExtraction | DocumentSkipped | None = None) -> DocState | None:
    """Run the deterministic path on one document and write its tables (none read past `deadline`;
    a PDF comes read already, `pdf`)."""
    try:
        if isinstance(pdf, DocumentSkipped):
            raise pdf
        if pdf is None and deadline is not None and time.monotonic() > deadline:
            raise DocumentSkipped(DEADLINE_PASSED)
        state = DocState(doc, file_sha256(doc.path))
        if doc.is_pdf:
            pdf = pdf if pdf is not None else extract_pdf(doc.path, deadline)
            tables, state.text, state.unit, state.n_units = pdf.tables, pdf.text, "pages", pdf.pages
            state.line_pages = [(a, b) for _, a, b in pdf.text_lines]
            report.warnings.extend(f"{doc.source} {w}" for w in pdf.warnings)
        else:
            state.text = read_text(doc.path)
            tables, warnings = extract_markdown(state.text)
            state.n_units = len(state.text.splitlines())
            report.warnings.extend(f"{doc.source} {w}" for w in warnings)
    except (DocumentSkipped, OSError) as exc:
        report.skipped.append(SkippedDocument(doc.source, str(exc)))
        return None
    names = [doc.stem] if len(tables) == 1 else [f"{doc.stem}_{i}" for i in range(1, len(tables) + 1)]
    for name, table in zip(names, tables):
        state.entries.append(write_table(table, name, doc, state.sha256, out_dir, used))
    if not tables and len(state.text.strip()) < MIN_NARRATIVE_CHARS:
        report.skipped.append(SkippedDocument(doc.source, "no table and too little text to hold one"))
        return None
    if doc.is_pdf:  # the reflowed text, for the structurizer and for people
        safe_write.write_file(out_dir / _text_file(doc), state.text, base=out_dir)
    return state


def _text_file(doc: Document) -> str:
    """Where a PDF's reflowed text goes, relative to the output folder."""
    return f"{TEXT_DIR}/{safe_write.fit_name(canonical_name(doc.stem), '.md')}"


def _keep_previous_llm_tables(
    old: dict[str, Any], narrative: list[DocState], out_dir: Path, used: set[str], report: DocReport
) -> None:
    """Without a model, keep the model's earlier tables for documents that did not change."""
    by_source = {s.doc.source: s for s in narrative}
    for e in old.get("tables", []):
        s = by_source.get(e.get("source", ""))
        if (
            e.get("method") == "llm" and s is not None and e.get("sha256") == s.sha256
            and (out_dir / e.get("file", "")).is_file() and canonical_name(e["table"]) not in used
        ):
            used.add(canonical_name(e["table"]))
            s.entries.append(e)


def _document_entry(s: DocState, report: DocReport) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "source": s.doc.source,
        "sha256": s.sha256,
        "tables": [e["table"] for e in s.entries],
    }
    if s.doc.is_pdf:
        entry["text"] = _text_file(s.doc)
        entry["pages"] = s.n_units
    skipped = [k.reason for k in report.skipped if k.source == s.doc.source]
    if skipped:
        entry["skipped"] = skipped[0]
    return entry


def _remove_stale_files(old: dict[str, Any], new: dict[str, Any], out_dir: Path) -> None:
    """Delete table files an earlier run wrote that this run no longer lists (only inside out_dir)."""
    keep = {e["file"] for e in new["tables"]} | {e.get("provenance") for e in new["tables"]}
    keep |= {d.get("text") for d in new["documents"]}
    old_files = {e.get("file") for e in old.get("tables", [])} | {e.get("provenance") for e in old.get("tables", [])}
    old_files |= {d.get("text") for d in old.get("documents", [])}
    root = out_dir.resolve()
    for name in old_files - keep:
        if not name:
            continue
        path = (out_dir / name).resolve()
        if root in path.parents and path.is_file():
            path.unlink()


def _written(e: dict[str, Any]) -> WrittenTable:
    return WrittenTable(
        table=e["table"], name=canonical_name(e["table"]), file=e["file"], source=e["source"],
        location=e.get("location", ""), method=e.get("method", ""), rows=int(e.get("rows", 0)),
        columns=tuple(e.get("columns") or ()), key=e.get("key"),
    )
