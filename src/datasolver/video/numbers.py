"""Numbers a model read off a frame must be in that frame's OCR text; the others are flagged."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?%?")


def numbers_in(text: str) -> set[str]:
    """Canonical forms of the numbers in `text` (grouping commas dropped, 6000.0 == 6000)."""
    found = set()
    for raw in _NUMBER.findall(text):
        canonical = _canonical(raw)
        if canonical is not None:
            found.add(canonical)
    return found


def unsupported_numbers(transcription: str, ocr_text: str) -> list[str]:
    """Numbers of `transcription` (as written there) that do not occur in `ocr_text`, in order."""
    known = numbers_in(ocr_text)
    flagged = []
    for raw in _NUMBER.findall(transcription):
        canonical = _canonical(raw)
        if canonical is not None and canonical not in known and raw not in flagged:
            flagged.append(raw)
    return flagged


def _canonical(raw: str) -> str | None:
    text = raw.rstrip("%").replace(",", "").lstrip("+")
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    normal = value.normalize()
    return format(normal, "f") + ("%" if raw.endswith("%") else "")
