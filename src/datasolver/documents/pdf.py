"""Digital PDFs: ruled tables via pdfplumber, the rest as reflowed text (and any pipe tables in it)."""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.data.pipe_tables import find_pipe_tables
from datasolver.documents.errors import DocumentSkipped
from datasolver.documents.markdown import format_ranges, merge_continued, unique_columns
from datasolver.documents.model import ExtractedTable
from datasolver.documents.reflow import Line, PageLines, join_lines, reflow, render, strip_running_lines


# A 6.4 KB PDF whose one page holds 200k drawing operators cost pdfminer 1.1 GB and a minute: a
# PDF is read only within these caps, each page's drawing instructions measured (decompressed,
# bounded) before pdfminer interprets them. A real page rarely holds more than a few hundred KB.
MAX_PDF_PAGES = 500
MAX_PAGE_CONTENT_BYTES = 1 << 20
MAX_PDF_CONTENT_BYTES = 32 << 20


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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    parts = [p.strip() for p in str(value).split("\n")]
    text = ""
    for part in parts:
        text = join_lines(text, part)
    return text.strip()


def _inside(obj: dict[str, Any], boxes: list[tuple[float, float, float, float]]) -> bool:
    cx = (obj["x0"] + obj["x1"]) / 2
    cy = (obj["top"] + obj["bottom"]) / 2
    return any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)


def _content_bytes(page: Any) -> int:
    """The decompressed size of a page's drawing instructions, counted up to the page cap only."""
    from pdfminer.pdftypes import resolve1

    total = 0
    for stream in (resolve1(s) for s in page.page_obj.contents):
        if getattr(stream, "data", None) is not None:  # already decoded by pdfminer
            total += len(stream.data)
        elif getattr(stream, "rawdata", None) is not None:
            filters = [getattr(f, "name", str(f)) for f, _ in stream.get_filters()]
            if filters == ["FlateDecode"]:  # the usual case: inflate at most what the cap allows
                left = MAX_PAGE_CONTENT_BYTES + 1 - total
                total += len(zlib.decompressobj().decompress(stream.rawdata, left))
            elif not filters:
                total += len(stream.rawdata)
            else:  # other filters are rare in content streams: pdfminer's own decoder, then measured
                total += len(stream.get_data())
        if total > MAX_PAGE_CONTENT_BYTES:
            break
    return total


def _check_caps(path: Path, number: int, page: Any, used: int) -> int:
    """Raise DocumentSkipped when the page breaks a cap; return the content bytes read so far."""
    if number > MAX_PDF_PAGES:
        raise DocumentSkipped(f"{path.name}: more than {MAX_PDF_PAGES} pages; only PDFs within that are read")
    size = _content_bytes(page)
    if size > MAX_PAGE_CONTENT_BYTES:
        raise DocumentSkipped(f"{path.name}: page {number} holds over {MAX_PAGE_CONTENT_BYTES >> 20} MB of drawing "
                              "instructions, more than a page of text or tables needs; not read")
    if used + size > MAX_PDF_CONTENT_BYTES:
        raise DocumentSkipped(f"{path.name}: its pages hold over {MAX_PDF_CONTENT_BYTES >> 20} MB of drawing "
                              "instructions in all; not read")
    return used + size


def _read_pages(path: Path, deadline: float | None = None) -> tuple[list[PageLines], list[_RuledTable]]:
    import pdfplumber  # heavy import; only when a PDF is present

    pages: list[PageLines] = []
    ruled: list[_RuledTable] = []
    used = 0
    try:
        with pdfplumber.open(path) as pdf:
            for number, page in enumerate(pdf.pages, 1):
                if deadline is not None and time.monotonic() > deadline:
                    raise DocumentSkipped(f"{path.name}: not read to the end before the preparing deadline "
                                          f"(stopped at page {number})")
                used = _check_caps(path, number, page, used)
                found = page.find_tables()  # default "lines" strategy: ruled tables only
                boxes = [t.bbox for t in found]
                for t in found:
                    rows = [[_cell(c) for c in row] for row in t.extract()]
                    rows = [r for r in rows if any(r)]
                    if rows:
                        ruled.append(_RuledTable(page.page_number, t.bbox[1], t.bbox[3], rows))
                text_page = page.filter(lambda o: not _inside(o, boxes)) if boxes else page
                lines = [
                    Line(
                        text=d["text"],
                        x0=d["x0"], x1=d["x1"], top=d["top"], bottom=d["bottom"],
                        size=max((c.get("size", 0.0) for c in d.get("chars", [])), default=0.0),
                    )
                    for d in text_page.extract_text_lines(return_chars=True)
                    if d["text"].strip()
                ]
                pages.append(PageLines(page.page_number, float(page.width), float(page.height), lines))
    except DocumentSkipped:
        raise
    except Exception as exc:  # pdfminer raises many unrelated types on damaged files
        raise DocumentSkipped(f"{path.name}: not a readable PDF ({type(exc).__name__}: {exc})") from exc
    return pages, ruled


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
    pages, ruled = _read_pages(path, deadline)
    if not ruled and not any(p.lines for p in pages):
        raise DocumentSkipped(f"{path.name}: no extractable text (a scanned PDF needs OCR, which is not available)")
    pages, removed = strip_running_lines(pages)
    tables = _merge_ruled(ruled, pages)

    lines = render(reflow(pages))
    texts = [t for t, _, _ in lines]
    for group in merge_continued(find_pipe_tables(texts)):
        ranges = [(lines[i][1], lines[i][2]) for t in group for i in range(t.first_line - 1, t.last_line)]
        rows = [r for t in group for r in t.rows]
        if rows:
            tables.append(
                ExtractedTable(unique_columns(group[0].header), rows, format_ranges(ranges, "pages"), "pdf-text")
            )
    return PdfExtraction(tables, "\n".join(texts), lines, len(pages), removed)
