"""Rows of a frame from its text boxes: boxes whose centres share a line form a row."""

from __future__ import annotations

import re
import statistics

from datasolver.video.ocr import TextBox

_TOKEN = re.compile(r"[\w.,%:/+\-]+")


def group_rows(boxes: list[TextBox]) -> list[list[TextBox]]:
    """Boxes grouped into rows top to bottom (centre within half a line height), each row left to right."""
    if not boxes:
        return []
    tolerance = 0.5 * statistics.median(b.height for b in boxes)
    rows: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: b.cy):
        if rows and abs(box.cy - statistics.fmean(b.cy for b in rows[-1])) <= tolerance:
            rows[-1].append(box)
        else:
            rows.append([box])
    return [sorted(row, key=lambda b: b.x0) for row in rows]


def layout_text(rows: list[list[TextBox]]) -> str:
    """One line per row, cells joined by ' | '."""
    return "\n".join(" | ".join(b.text for b in row) for row in rows)


def reading_text(rows: list[list[TextBox]]) -> str:
    """All text in reading order (rows top to bottom, left to right), space separated."""
    return " ".join(b.text for row in rows for b in row)


def tokens(text: str) -> set[str]:
    """Comparable tokens of OCR text: runs of letters, digits, CJK and number punctuation, lower-cased."""
    return {t.strip(".,:/-").lower() for t in _TOKEN.findall(text)} - {""}


def has_new_token(text: str, before: str, min_chars: int = 2) -> bool:
    """Whether `text` holds a token of at least `min_chars` characters that `before` lacks."""
    old = tokens(before)
    return any(len(t) >= min_chars and t not in old for t in tokens(text))
