"""Line addressing for read_solver/edit_solver: `<n>:<HH>|<content>`.

The hash is two uppercase ASCII letters (676 values) derived from the line's exact content.
Letters only, so a model never sends it as a number; it only has to catch "the file changed
since you read it", not collisions.
"""

from __future__ import annotations

import zlib

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def line_hash(content: str) -> str:
    """Two uppercase letters for one line (without its newline)."""
    value = zlib.crc32(content.encode("utf-8", "surrogatepass")) % (26 * 26)
    return _LETTERS[value // 26] + _LETTERS[value % 26]


def split_lines(text: str) -> list[str]:
    """Lines of a file the way the tools number them (\\r\\n and \\r count as \\n)."""
    text = normalize_newlines(text)
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def join_lines(lines: list[str]) -> str:
    """File text for `lines`, with a final newline."""
    return "\n".join(lines) + "\n" if lines else ""


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def render_lines(lines: list[str], start: int, stop: int) -> str:
    """Lines start..stop (1-based, inclusive, clipped) as `n:HH|content`, one per line."""
    start = max(1, start)
    stop = min(len(lines), stop)
    return "\n".join(f"{n}:{line_hash(lines[n - 1])}|{lines[n - 1]}" for n in range(start, stop + 1))
