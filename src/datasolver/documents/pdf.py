"""Digital PDFs: ruled tables via pdfplumber, the rest as reflowed text (and any pipe tables in it)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.data.pipe_tables import find_pipe_tables
from datasolver.documents.errors import DocumentSkipped
from datasolver.documents.markdown import format_ranges, merge_continued, unique_columns
from datasolver.documents.records import ExtractedTable
from datasolver.documents.reflow import Line, PageLines, join_lines, reflow, render, strip_running_lines
from datasolver.sandbox import SandboxError, SandboxLimits, UnsafeFile, run_sandboxed, safe_files
from datasolver.sandbox.run import STOPPED_REASON


# A 6.4 KB PDF whose one page holds 200k drawing operators cost pdfminer 1.1 GB and a minute, and a
# 2.8 KB one whose page draws Form XObjects nested 7 deep x 10 asked for 10^7 text draws: a PDF is
# read only within these caps (a page's drawing instructions, a form counted each time it is drawn),
# measured before and while pdfminer interprets them (`_pdf_reader.py`). A real page rarely holds
# more than a few hundred KB, and rarely nests forms more than two or three deep.
MAX_PDF_PAGES = 500
MAX_PAGE_CONTENT_BYTES = 1 << 20
MAX_PDF_CONTENT_BYTES = 32 << 20
MAX_FORM_DEPTH = 12
MAX_FORM_DRAWS = 5_000  # pdfminer takes about a millisecond per form drawn
# The reading itself runs in the sandbox (pdfminer is pure Python: the danger is time and memory,
# which the sandbox bounds and its supervisor ends on a deadline, Ctrl-C or SIGTERM, also when the
# pass runs in a worker thread no one can stop). Without a deadline one PDF gets MAX_PDF_SECONDS.
# One reader reads all the PDFs of a pass (its start, ~0.7 CPU-s, is paid once).
PDF_MEMORY_BYTES = 1 << 30
MAX_PDF_SECONDS = 120.0
START_GRACE_S = 5.0  # the sandbox's own start on a loaded machine, past the reader's deadline
DEADLINE_PASSED = "not read: the preparing deadline had passed"
OUTPUT_MAX_BYTES = 64 << 20  # the reader's answer (lines and cells of at most 32 MB of instructions)
READER = Path(__file__).with_name("_pdf_reader.py")


@dataclass
class _RuledTable:
    page: int
    top: float
    bottom: float
    rows: list[list[str]]


@dataclass
class PdfExtraction:
    """Everything read from one PDF."""

    tables: list[ExtractedTable]
    text: str
    """Reflowed text (Markdown-ish: blank lines between paragraphs, `## ` headings)."""
    text_lines: list[tuple[str, int, int]]
    """`text` as lines with the page range each came from (for provenance)."""
    pages: int
    removed: list[str] = field(default_factory=list)
    """Running headers, footers and page numbers that were dropped."""
    warnings: list[str] = field(default_factory=list)
    """Tables in the text that were not read as tables, and why."""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    parts = [p.strip() for p in str(value).split("\n")]
    text = ""
    for part in parts:
        text = join_lines(text, part)
    return text.strip()


def _reader_limits(seconds: float) -> SandboxLimits:
    """The sandbox of one reader: 1 GiB, its answers as the only files, killed `START_GRACE_S` after
    its own deadline (`seconds`)."""
    backstop = seconds + START_GRACE_S
    return SandboxLimits(timeout_s=backstop, memory_bytes=PDF_MEMORY_BYTES, tree_memory_bytes=PDF_MEMORY_BYTES,
                         cpu_seconds=int(backstop) + 1, file_size_bytes=OUTPUT_MAX_BYTES,
                         disk_bytes=4 * OUTPUT_MAX_BYTES, max_processes=16)


def read_pdfs(paths: list[Path], deadline: float | None = None) -> list[PdfExtraction | DocumentSkipped]:
    """Every PDF of `paths`, in order: what was read, or why it was not (see `extract_pdf`).

    One sandboxed reader reads them one after the other (one interpreter start for the lot); when
    it is killed (the deadline, memory), the PDF it was reading is skipped with the reason and a new
    reader goes on with the rest while time is left.
    """
    results: list[PdfExtraction | DocumentSkipped | None] = [None] * len(paths)
    pending = list(range(len(paths)))
    while pending:
        seconds = MAX_PDF_SECONDS * len(pending)
        if deadline is not None:
            seconds = min(seconds, deadline - time.monotonic())
        if seconds <= 0:
            for i in pending:
                results[i] = DocumentSkipped(DEADLINE_PASSED)
            break
        answers, stopped = _run_reader([paths[i] for i in pending], seconds, deadline is not None)
        for i, answer in zip(pending, answers):
            results[i] = _extraction(paths[i], answer)
        pending = pending[len(answers):]
        if pending:  # the reader was killed while it read this one
            results[pending[0]] = DocumentSkipped(f"{paths[pending[0]].name}: {stopped}")
            pending = pending[1:]
    return [r if r is not None else DocumentSkipped(DEADLINE_PASSED) for r in results]


def _run_reader(paths: list[Path], seconds: float, has_deadline: bool) -> tuple[list[dict[str, Any]], str]:
    """The answers of one reader (`_pdf_reader.py`, in the sandbox) in order, as far as it got, and
    why it stopped short of the rest. It may read those files only (through links in a folder of
    its own) and write its answers only."""
    caps = {"max_pages": MAX_PDF_PAGES, "max_page_bytes": MAX_PAGE_CONTENT_BYTES,
            "max_total_bytes": MAX_PDF_CONTENT_BYTES, "max_form_depth": MAX_FORM_DEPTH,
            "max_form_draws": MAX_FORM_DRAWS}
    with tempfile.TemporaryDirectory(prefix="datasolver-pdf-") as tmp:
        given, out = Path(tmp, "in"), Path(tmp, "out")
        given.mkdir()
        out.mkdir()
        for number, path in enumerate(paths):
            os.symlink(os.path.realpath(path), given / f"{number}.pdf")
        request = {"pdfs": [str(given / f"{n}.pdf") for n in range(len(paths))], "caps": caps, "seconds": seconds,
                   "seconds_per_pdf": MAX_PDF_SECONDS}
        (given / "in.json").write_text(json.dumps(request), encoding="utf-8")
        try:
            run = run_sandboxed([sys.executable, "-I", str(READER), str(given / "in.json"), str(out)], cwd=out,
                                write_dirs=[out], log_dir=out, read_dirs=[given], limits=_reader_limits(seconds),
                                env={}, fork_server=False)
        except SandboxError as exc:
            return [], f"not read: the sandbox that reads PDFs could not start ({exc})"
        answers = []
        for number in range(len(paths)):
            if not safe_files.is_regular(out / f"{number}.json"):
                break
            try:
                answer = json.loads(safe_files.read_text(out / f"{number}.json", max_bytes=OUTPUT_MAX_BYTES))
            except (OSError, UnsafeFile, ValueError) as exc:
                answer = {"skipped": f"not read: the reader's answer was unreadable ({exc})"}
            answers.append(answer if isinstance(answer, dict) else {"skipped": "not read: the reader's answer was "
                                                                                "unreadable"})
    if run.killed_for == STOPPED_REASON:
        return answers, f"not read: {STOPPED_REASON}"
    if run.timed_out:
        when = "before the preparing deadline" if has_deadline else "within its time"
        return answers, f"not read to the end {when} (stopped inside a page)"
    why = run.killed_for or run.signal_name or f"exit status {run.returncode}"
    return answers, (f"not read: the reader was stopped ({why[:200]}); a PDF may use at most "
                     f"{PDF_MEMORY_BYTES >> 20} MB of memory")


def _extraction(path: Path, answer: dict[str, Any]) -> PdfExtraction | DocumentSkipped:
    """The reader's answer for one PDF as an extraction (its types checked), or why it was skipped."""
    if "skipped" in answer:
        return DocumentSkipped(f"{path.name}: {str(answer['skipped'])[:500]}")
    try:
        pages = [PageLines(int(number), float(width), float(height),
                           [Line(text=str(t), x0=float(x0), x1=float(x1), top=float(top), bottom=float(bottom),
                                 size=float(size)) for t, x0, x1, top, bottom, size in lines])
                 for number, width, height, lines in answer["pages"]]
        ruled = [_RuledTable(int(page), float(top), float(bottom), rows)
                 for page, top, bottom, table in answer["ruled"]
                 if (rows := [r for r in ([_cell(c) for c in row] for row in table) if any(r)])]
    except (KeyError, TypeError, ValueError) as exc:
        return DocumentSkipped(f"{path.name}: not read: the reader's answer was unreadable ({exc})")
    try:
        return _extract_from(path, pages, ruled)
    except DocumentSkipped as exc:
        return exc


def _merge_ruled(ruled: list[_RuledTable], pages: list[PageLines]) -> list[ExtractedTable]:
    """Join a ruled table continued on the next page (header repeated, or table ends one page
    and starts the next with no text in between)."""
    by_page = {p.number: p for p in pages}

    def last_on_page(t: _RuledTable) -> bool:
        return all(ln.top < t.bottom for ln in by_page[t.page].lines)

    def first_on_page(t: _RuledTable) -> bool:
        return all(ln.bottom > t.top for ln in by_page[t.page].lines)

    groups: list[tuple[list[str], list[list[str]], list[tuple[int, int]], _RuledTable]] = []
    for t in ruled:
        if groups:
            header, rows, ranges, prev = groups[-1]
            if len(t.rows[0]) == len(header) and t.page == prev.page + 1:
                if t.rows[0] == header:
                    rows.extend(t.rows[1:])
                elif last_on_page(prev) and first_on_page(t):
                    rows.extend(t.rows)
                else:
                    groups.append((t.rows[0], t.rows[1:], [(t.page, t.page)], t))
                    continue
                ranges.append((t.page, t.page))
                groups[-1] = (header, rows, ranges, t)
                continue
        groups.append((t.rows[0], t.rows[1:], [(t.page, t.page)], t))
    return [
        ExtractedTable(unique_columns(header), rows, format_ranges(ranges, "pages"), "pdf-table")
        for header, rows, ranges, _ in groups
        if rows
    ]


def extract_pdf(path: Path, deadline: float | None = None) -> PdfExtraction:
    """Ruled tables, reflowed text, and pipe tables written as text, from one digital PDF.

    Read within MAX_PDF_PAGES, MAX_PAGE_CONTENT_BYTES and MAX_PDF_CONTENT_BYTES, and stopped at
    `deadline` (time.monotonic()); past any of them the document is skipped with the reason.
    """
    result = read_pdfs([path], deadline)[0]
    if isinstance(result, DocumentSkipped):
        raise result
    return result


def _extract_from(path: Path, pages: list[PageLines], ruled: list[_RuledTable]) -> PdfExtraction:
    """Tables and reflowed text from what the reader gave for one PDF."""
    if not ruled and not any(p.lines for p in pages):
        raise DocumentSkipped(f"{path.name}: no extractable text (a scanned PDF needs OCR, which is not available)")
    pages, removed = strip_running_lines(pages)
    tables = _merge_ruled(ruled, pages)

    lines = render(reflow(pages))
    texts = [t for t, _, _ in lines]
    warnings = []
    for group in merge_continued(find_pipe_tables(texts)):
        ranges = [(lines[i][1], lines[i][2]) for t in group for i in range(t.first_line - 1, t.last_line)]
        refused = [t.refused for t in group if t.refused]
        if refused:
            warnings.append(f"{format_ranges(ranges, 'pages')}: not read as a table: {refused[0]}")
            continue
        rows = [r for t in group for r in t.rows]
        if rows:
            tables.append(
                ExtractedTable(unique_columns(group[0].header), rows, format_ranges(ranges, "pages"), "pdf-text")
            )
    return PdfExtraction(tables, "\n".join(texts), lines, len(pages), removed, warnings)
