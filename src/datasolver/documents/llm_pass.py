"""The model's part of prepare: vote on which narrative documents matter, structure those."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from datasolver.documents.errors import DocError
from datasolver.documents.manifest import write_csv, write_table
from datasolver.documents.markdown import format_ranges
from datasolver.documents.records import DocReport, DocState, ExtractedTable, PrepareOptions, SkippedDocument
from datasolver.documents.structurize import structurize_document
from datasolver.documents.structurize.join import PROVENANCE_COLUMNS
from datasolver.documents.votes import tally_votes
from datasolver.errors import PromptError
from datasolver.llm.errors import LLMError

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

DESCRIPTION_CHARS = 500


def describe(state: DocState) -> str:
    """What a voter sees of a document: its size and opening text."""
    body = " ".join(state.text.split())
    return f"{len(state.text)} characters; begins: {body[:DESCRIPTION_CHARS]}"


def _locator(state: DocState):
    """Line range of the document text → its location string (pages for a PDF)."""
    if state.unit == "pages" and state.line_pages:
        pages = state.line_pages

        def pdf_location(first: int, last: int) -> str:
            chosen = pages[max(0, first - 1) : max(first, last)] or pages[-1:]
            return format_ranges(list(chosen), "pages")

        return pdf_location
    return lambda first, last: format_ranges([(first, last)], "lines")


async def structure_documents(
    llm: LLMClient,
    narrative: list[DocState],
    out_dir: Path,
    used: set[str],
    report: DocReport,
    options: PrepareOptions,
) -> None:
    """Structure the narrative documents judged relevant (all of them when there is no question)."""
    chosen = narrative
    if options.question and options.votes > 0:
        tally = await tally_votes(
            llm, options.question, [(s.doc.source, describe(s)) for s in narrative], options.votes, kind="documents"
        )
        decision = tally.decide()
        chosen = [s for s in narrative if decision.get(s.doc.source, True)]
        for s in narrative:
            if s not in chosen:
                report.skipped.append(SkippedDocument(s.doc.source, "not relevant to the question (relevance votes)"))

    async def one(state: DocState) -> tuple[DocState, Any]:
        try:
            return state, await structurize_document(
                llm, state.text, document_name=state.doc.path.name, knowledge=options.knowledge,
                limits=options.limits, location=_locator(state), document_sha256=state.sha256,
                cache_dir=options.cache_dir or out_dir / ".cache",
            )
        except (DocError, LLMError, PromptError) as exc:
            return state, exc

    for state, outcome in await asyncio.gather(*(one(s) for s in chosen)):
        if isinstance(outcome, Exception):
            report.skipped.append(SkippedDocument(state.doc.source, f"structurizer failed: {outcome}"))
            continue
        whole = _locator(state)(1, max(1, len(state.text.splitlines())))
        table = ExtractedTable(outcome.columns, outcome.rows, whole, "llm", key=outcome.key)
        entry = write_table(table, state.doc.stem, state.doc, state.sha256, out_dir, used)
        provenance = entry["file"].removesuffix(".csv") + ".provenance.csv"
        write_csv(out_dir / provenance, PROVENANCE_COLUMNS, outcome.provenance)
        entry["provenance"] = provenance
        state.entries.append(entry)
        report.warnings.extend(f"{state.doc.source}: {w}" for w in outcome.warnings)
