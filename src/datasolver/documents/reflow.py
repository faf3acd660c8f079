"""Layout-aware reflow of PDF text lines: drop running headers/footers, rebuild paragraphs.

Pure functions over positioned lines, so they are tested without a PDF.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

# Lines this close to the top/bottom edge (fraction of page height) may be running heads/feet.
EDGE_ZONE = 0.12
_PAGE_NUMBER = re.compile(
    r"^[-–—\s]*(?:page\s*)?\d+(?:\s*(?:/|of)\s*\d+)?[-–—\s]*$"
    r"|^第\s*\d+\s*页(?:\s*[,，/]?\s*共\s*\d+\s*页)?$",
    re.IGNORECASE,
)
_LIST_OR_HEADING = re.compile(
    r"^(?:#{1,6}\s|[-*•·▪●]\s|\(?\d{1,3}[.)、]\s?|[（(][一二三四五六七八九十\d]+[)）]|"
    r"[一二三四五六七八九十]+、|第[一二三四五六七八九十百\d]+[章节条部分])"
)
_TERMINAL = tuple(".!?。！？…;；:：")
_CLOSERS = "\"'”’)）」』】]"


@dataclass
class Line:
    """One text line on a page, in PDF points (top grows downwards)."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float = 0.0
    """Largest font size on the line; 0 when unknown."""


@dataclass
class PageLines:
    number: int
    """1-based page number."""
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)


@dataclass
class Paragraph:
    text: str
    first_page: int
    last_page: int
    kind: str = "text"
    """"text", "heading" or "table-row" (a `|`-delimited line, kept on its own)."""


def _signature(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.strip().lower()))


def is_page_number(text: str) -> bool:
    """"3", "- 3 -", "Page 3 of 9", "3/9", "第 3 页" and the like."""
    return bool(_PAGE_NUMBER.match(text.strip()))


def strip_running_lines(pages: list[PageLines]) -> tuple[list[PageLines], list[str]]:
    """Remove repeated headers/footers and page numbers near the page edges.

    A line is a running line when it sits among the first/last two lines of a page, inside the
    edge zone, and either looks like a page number or repeats (digits ignored) on at least half
    of the pages (at least two).
    """
    def candidates(page: PageLines) -> list[int]:
        n = len(page.lines)
        idx = {i for i in range(min(2, n))} | {i for i in range(max(0, n - 2), n)}
        out = []
        for i in sorted(idx):
            ln = page.lines[i]
            if ln.top < EDGE_ZONE * page.height or ln.bottom > (1 - EDGE_ZONE) * page.height:
                out.append(i)
        return out

    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_signature(page.lines[i].text) for i in candidates(page)})
    threshold = max(2, math.ceil(len(pages) / 2))
    repeated = {sig for sig, c in counts.items() if c >= threshold} if len(pages) >= 2 else set()

    removed: list[str] = []
    cleaned: list[PageLines] = []
    for page in pages:
        drop = {
            i for i in candidates(page)
            if is_page_number(page.lines[i].text) or _signature(page.lines[i].text) in repeated
        }
        removed.extend(page.lines[i].text for i in sorted(drop))
        kept = [ln for i, ln in enumerate(page.lines) if i not in drop]
        cleaned.append(PageLines(page.number, page.width, page.height, kept))
    return cleaned, removed


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or "\uff00" <= ch <= "\uffef" or "\u3000" <= ch <= "\u303f"


def join_lines(a: str, b: str) -> str:
    """Join two wrapped lines: no space around CJK text, de-hyphenate Latin words."""
    if not a:
        return b
    if not b:
        return a
    if a.endswith("-") and len(a) > 1 and a[-2].isalpha() and b[0].islower():
        return a[:-1] + b
    if _is_cjk(a[-1]) or _is_cjk(b[0]):
        return a + b
    return a + " " + b


def ends_sentence(text: str) -> bool:
    """True when the text ends a sentence (after any closing quotes or brackets)."""
    return text.rstrip().rstrip(_CLOSERS).endswith(_TERMINAL)


def _page_paragraphs(page: PageLines, body_size: float) -> list[tuple[Paragraph, bool]]:
    """Paragraphs of one page, each with `opens`: True when it clearly starts a new paragraph."""
    lines = [ln for ln in page.lines if ln.text.strip()]
    if not lines:
        return []
    heights = [ln.bottom - ln.top for ln in lines]
    h = statistics.median(heights) or 1.0
    gaps = [b.top - a.bottom for a, b in zip(lines, lines[1:])]
    usual_gap = statistics.median(gaps) if gaps else 0.0
    left = min(ln.x0 for ln in lines)
    # A robust right margin: one overlong line must not make every other line look short.
    ends = sorted(ln.x1 for ln in lines)
    right = ends[int(0.9 * (len(ends) - 1))]

    out: list[tuple[Paragraph, bool]] = []
    prev: Line | None = None
    for ln in lines:
        text = ln.text.strip()
        is_table = text.startswith("|")
        is_heading = bool(body_size) and ln.size > body_size * 1.15 and not is_table
        indented = ln.x0 > left + 1.0 * h
        marker = bool(_LIST_OR_HEADING.match(text))
        if prev is None:
            opens = is_table or is_heading or indented or marker
            new = True
        else:
            big_gap = (ln.top - prev.bottom) > usual_gap + 0.6 * h
            short_end = prev.x1 < right - 3 * h
            last = out[-1][0]
            opens = is_table or is_heading or indented or marker or big_gap or short_end
            new = opens or last.kind != "text"
        kind = "table-row" if is_table else "heading" if is_heading else "text"
        if new:
            out.append((Paragraph(text, page.number, page.number, kind), opens))
        else:
            out[-1][0].text = join_lines(out[-1][0].text, text)
        prev = ln
    return out


def reflow(pages: list[PageLines]) -> list[Paragraph]:
    """Paragraphs of a document; a paragraph cut by a page break is joined back together."""
    sizes = [ln.size for p in pages for ln in p.lines if ln.size]
    body_size = statistics.median(sizes) if sizes else 0.0
    paragraphs: list[Paragraph] = []
    for page in pages:
        page_paras = _page_paragraphs(page, body_size)
        if page_paras and paragraphs:
            first, opens = page_paras[0]
            last = paragraphs[-1]
            if (
                not opens
                and last.kind == "text"
                and first.kind == "text"
                and last.last_page == page.number - 1
                and not ends_sentence(last.text)
            ):
                last.text = join_lines(last.text, first.text)
                last.last_page = page.number
                page_paras = page_paras[1:]
        paragraphs.extend(p for p, _ in page_paras)
    return paragraphs


def render(paragraphs: list[Paragraph]) -> list[tuple[str, int, int]]:
    """Markdown-ish lines `(text, first_page, last_page)`: blank lines between paragraphs,
    headings as `## …`, consecutive table rows kept together so pipe tables parse."""
    out: list[tuple[str, int, int]] = []
    for i, para in enumerate(paragraphs):
        if i and not (para.kind == "table-row" and paragraphs[i - 1].kind == "table-row"):
            out.append(("", para.first_page, para.first_page))
        text = f"## {para.text}" if para.kind == "heading" else para.text
        out.append((text, para.first_page, para.last_page))
    return out
