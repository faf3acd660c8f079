"""knowledge.md as every caller reads it: within a size cap, and in parts past the prompt's share.

A 20 MB knowledge.md went whole into each of a task's ten requests (201 MB to the model), and the
file was read whole wherever it was wanted. Now it is read once per use up to MAX_KNOWLEDGE_BYTES
(`input_files.read_capped`: a regular file the input check accepted, never blocking); the first
prompt holds its first PROMPT_PARTS parts of PART_CHARS characters with a line saying how much
follows, and `\\knowledge N` (the tools) shows part N. Real tasks' knowledge.md (at most 18.5 KB
in the dev sets) fits in the first part or three, whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver.data.input_files import read_capped
from datasolver.sizes import human_size

MAX_KNOWLEDGE_BYTES = 4 << 20
PART_CHARS = 8_000  # one part fits one tool result (agent Limits.tool_result_chars: 12,000)
PROMPT_PARTS = 3


@dataclass(frozen=True)
class KnowledgeFile:
    """What was read of knowledge.md (`text`), the file's size in bytes (0: the task has none) and
    whether `text` is all of it."""

    text: str = ""
    size: int = 0
    complete: bool = True

    @classmethod
    def read(cls, path: Path | None) -> KnowledgeFile:
        """knowledge.md at `path` (one the input check accepted), at most MAX_KNOWLEDGE_BYTES of it."""
        if path is None:
            return cls()
        read = read_capped(path, MAX_KNOWLEDGE_BYTES)
        text = read.data.decode("utf-8", errors="replace")
        if read.cut:  # a character cut in two at the cap is not a character of the file
            text = text.rstrip("\ufffd")
        return cls(text, read.size, not read.cut)

    def bounds(self) -> list[tuple[int, int]]:
        """Where each part starts and ends in `text`: PART_CHARS at most, ended at a line break in
        the part's second half when there is one."""
        bounds, start = [], 0
        while start < len(self.text):
            end = min(start + PART_CHARS, len(self.text))
            if end < len(self.text):
                brk = self.text.rfind("\n", start + PART_CHARS // 2, end)
                end = brk + 1 if brk >= 0 else end
            bounds.append((start, end))
            start = end
        return bounds

    def part(self, number: int) -> str | None:
        """Part `number` (from 1) with a line saying which, or None past the last part. With one
        part only, the text as it is."""
        bounds = self.bounds()
        if not 1 <= number <= len(bounds):
            return None
        if len(bounds) == 1 and self.complete:
            return self.text
        start, end = bounds[number - 1]
        head = f"knowledge.md, part {number} of {len(bounds)} (characters {start + 1:,}–{end:,} of {self._extent()}):"
        return head + "\n" + self.text[start:end]

    def opening(self, parts: int = PROMPT_PARTS) -> str:
        """The first prompt's knowledge: the first `parts` parts, and a line saying how much follows
        and how to read it when that is not all."""
        bounds = self.bounds()
        if len(bounds) <= parts and self.complete:
            return self.text
        shown = min(parts, len(bounds))
        end = bounds[shown - 1][1] if bounds else 0
        more = (f"; `\\knowledge {parts + 1}` shows the next part, `\\knowledge N` part N" if len(bounds) > parts else "")
        return (self.text[:end].rstrip() + f"\n… (knowledge.md goes on: this is part 1–{shown} of {len(bounds)}, "
                f"its first {end:,} of {self._extent()}{more}.)")

    def _extent(self) -> str:
        if self.complete:
            return f"{len(self.text):,} characters"
        return (f"{len(self.text):,} characters read (the file is {human_size(self.size)}, read up to its first "
                f"{human_size(MAX_KNOWLEDGE_BYTES)})")
