"""Cut a document into parts that each fit one worker call, at headings and paragraph breaks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
# Past this share of the limit, a blank line is a good enough place to cut.
_EARLY_CUT = 0.8


@dataclass
class Part:
    """A run of whole lines of the document (1-based, inclusive line numbers)."""

    index: int
    title: str
    text: str
    first_line: int
    last_line: int


@dataclass
class _Block:
    title: str
    first_line: int
    last_line: int = 0
    lines: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(len(s) + 1 for s in self.lines)

    def add(self, line: str, number: int) -> None:
        self.lines.append(line)
        self.last_line = number


def _heading_blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    for number, line in enumerate(lines, start=1):
        if _HEADING.match(line):
            blocks.append(_Block(line.strip().lstrip("#").strip(), number))
        elif not blocks:
            blocks.append(_Block("", number))
        blocks[-1].add(line, number)
    return [b for b in blocks if any(s.strip() for s in b.lines)]


def _split_block(block: _Block, max_chars: int) -> list[_Block]:
    """A block over the limit, cut at blank lines where possible, else at line ends, else hard."""
    out = [_Block(block.title, block.first_line)]
    number = block.first_line
    for line in block.lines:
        pieces = [line[i : i + max_chars] for i in range(0, len(line), max_chars)] or [""]
        for piece in pieces:
            cur = out[-1]
            full = cur.lines and cur.size + len(piece) + 1 > max_chars
            early = not piece.strip() and cur.size > max_chars * _EARLY_CUT
            if full or early:
                out.append(_Block(block.title, number))
            out[-1].add(piece, number)
        number += 1
    return [b for b in out if any(s.strip() for s in b.lines)]


def split_parts(text: str, max_chars: int) -> list[Part]:
    """Parts of at most `max_chars`: heading sections packed together while they fit, long
    sections split at paragraph breaks. Line numbers let provenance point back to the document."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another
    blocks: list[_Block] = []
    for block in _heading_blocks(lines):
        blocks.extend(_split_block(block, max_chars) if block.size > max_chars else [block])
    groups: list[list[_Block]] = []
    size = 0
    for block in blocks:
        if not groups or size + block.size > max_chars:
            groups.append([])
            size = 0
        groups[-1].append(block)
        size += block.size
    parts: list[Part] = []
    for group in groups:
        first, last = group[0].first_line, group[-1].last_line
        titles = list(dict.fromkeys(b.title for b in group if b.title))
        title = " / ".join(titles)[:200] if titles else f"lines {first}-{last}"
        body = "\n".join(s for b in group for s in b.lines).strip("\n")
        parts.append(Part(len(parts), title, body, first, last))
    return parts
