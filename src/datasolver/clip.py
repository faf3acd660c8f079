"""Cutting text to a size: the one clip helper every room uses (a leaf: it imports nothing of ours)."""

from __future__ import annotations

ELLIPSIS = "…"


def clip(text: str, limit: int, *, keep_end: bool = False, counted: bool = False, note: str = "") -> str:
    """`text` unchanged when it has at most `limit` characters; otherwise cut.

    The plain cut is at most `limit` characters with "…" marking where text was left out: the
    start is kept, or the end with `keep_end`. With `counted` (or a `note`) the first `limit`
    characters are kept and a last line says how many more were cut (and the note), for a
    reader who may ask for the rest.
    """
    if len(text) <= limit:
        return text
    if counted or note:
        return text[:limit] + f"\n{ELLIPSIS} ({len(text) - limit} more characters cut{'; ' + note if note else ''})"
    keep = max(0, limit - 1)
    if keep_end:
        return ELLIPSIS + (text[-keep:] if keep else "")
    return text[:keep] + ELLIPSIS


def clip_names(names: list[str], limit: int) -> str:
    """`a, b, c` with at most `limit` names, then `… (+N more)`: a table's column list in a listing."""
    shown = ", ".join(names[:limit])
    return shown + (f", {ELLIPSIS} (+{len(names) - limit} more)" if len(names) > limit else "")


__all__ = ["ELLIPSIS", "clip", "clip_names"]
