"""Question hygiene: what reaches the model is the question, once, without noise.

Rules (documented in docs/ask.md): invisible and control characters go; whitespace collapses;
a leading label ("Question:", "Q:", "问题：") and wrapping quotes or backticks go; runs of ? and !
shrink to one; a sentence repeated word for word is kept once (also a whole question pasted
twice); past `data.tasks.MAX_QUESTION_CHARS` characters the rest is left out, with a line saying so. A question with nothing left that is a letter, digit or CJK character is empty.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property

from datasolver.ask.errors import EmptyQuestion
from datasolver.data.question_shape import QuestionShape, read_question
from datasolver.data.tasks import MAX_QUESTION_CHARS, capped_question

_INVISIBLE = re.compile(r"[\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\ufeff\u00ad]")
_LABEL = re.compile(r"^(?:question|q|query|ask|问题|问)\s*[:：]\s*", re.IGNORECASE)
_WRAPPERS = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), ("`", "`"))
_PUNCT_RUN = re.compile(r"([?!？！])[?!？！]+")
# A sentence ends at . ? ! (followed by a blank or the end) or at a CJK full stop / ? / !.
_SENTENCE = re.compile(r".+?(?:[.?!](?=\s|$)|[。？！]|$)", re.DOTALL)


@dataclass
class CleanQuestion:
    """The cleaned question and what cleaning changed (for the record and the trace)."""

    text: str
    original: str
    notes: list[str] = field(default_factory=list)

    @cached_property
    def shape(self) -> QuestionShape:
        """What the cleaned question asks for, read once (`data/question_shape.py`) and carried to the
        answer checks and the direct path."""
        return read_question(self.text)


def clean_question(raw: str | None) -> CleanQuestion:
    """Clean a question; never raises (see `require_question`)."""
    original = raw if isinstance(raw, str) else ""
    notes: list[str] = []
    text = original.replace("```", " ")
    invisible = len(_INVISIBLE.findall(text))
    text = _INVISIBLE.sub("", text)
    controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\n\t\r")
    text = "".join(ch if unicodedata.category(ch) != "Cc" else " " for ch in text)
    if invisible or controls:
        notes.append(f"removed {invisible + controls} invisible or control character(s)")
    text = " ".join(text.split())
    while True:
        before = text
        text = _LABEL.sub("", text).strip()
        for left, right in _WRAPPERS:
            if len(text) >= 2 and text.startswith(left) and text.endswith(right):
                text = text[len(left): -len(right)].strip()
        if text == before:
            break
        notes.append("removed a label or wrapping quotes")
    squeezed = _PUNCT_RUN.sub(r"\1", text)
    if squeezed != text:
        notes.append("shortened repeated ? or !")
        text = squeezed
    text, dropped = _drop_repeats(text)
    if dropped:
        notes.append(f"dropped {dropped} repeated sentence(s)")
    if len(text) > MAX_QUESTION_CHARS:
        notes.append(f"kept the first {MAX_QUESTION_CHARS:,} of the question's {len(text):,} characters")
        text = capped_question(text)
    return CleanQuestion(text, original, notes)


def require_question(raw: str | None) -> CleanQuestion:
    """Clean a question; raise EmptyQuestion when nothing meaningful is left."""
    cleaned = clean_question(raw)
    if not any(ch.isalnum() for ch in cleaned.text):
        raise EmptyQuestion("the question is empty (or only punctuation and invisible characters); "
                            "give the question as text, e.g. \"How many orders were shipped in 2023?\"")
    return cleaned


def _drop_repeats(text: str) -> tuple[str, int]:
    half = len(text) // 2
    # A question pasted twice with no sentence end between the copies: "How many X How many X".
    if len(text) % 2 == 1 and text[half] == " " and text[:half].lower() == text[half + 1:].lower():
        return text[:half], 1
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in sentences:
        key = " ".join(sentence.lower().split())
        if key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    if len(kept) == len(sentences):
        return text, 0
    joiner = "" if all(_is_cjk_end(s) for s in kept) else " "
    return joiner.join(kept), len(sentences) - len(kept)


def _is_cjk_end(sentence: str) -> bool:
    return sentence[-1] in "。？！"
