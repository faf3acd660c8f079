"""Prompt text files (`<room>_<name>.md`) with `{{name}}` placeholders, shared by every room.

Each room keeps its own prefix; every failure is the one `datasolver.errors.PromptError`.
Filling is strict (every placeholder given, no value unused) and single-pass, so a value that itself contains `{{x}}` (knowledge.md, data, a
question) is never expanded again. Nor can a value close or open the prompt's own tags: a
`</knowledge>` written in knowledge.md would end the block early and make the text after it look
like the prompt's own words, so every tag the template itself uses is neutralised in every value
(`</knowledge>` becomes `‹/knowledge›`; with attributes or invisible format characters too), here,
for every room.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

from datasolver.errors import PromptError

PROMPTS_DIR = Path(__file__).resolve().parent
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
_TAG = re.compile(r"<(\s*/?\s*)([A-Za-z_][\w-]*)(\s*)>")


@lru_cache(maxsize=None)
def _read(filename: str) -> str | OSError:
    try:
        return (PROMPTS_DIR / filename).read_text(encoding="utf-8")
    except OSError as exc:
        return exc


class PromptFiles:
    """The prompt files of one room: `prompts/<prefix><name>.md`; failures raise `PromptError`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def template(self, name: str) -> str:
        """The raw text of `prompts/<prefix><name>.md`."""
        text = _read(f"{self.prefix}{name}.md")
        if isinstance(text, OSError):
            raise PromptError(f"prompt file {PROMPTS_DIR / (self.prefix + name)}.md is missing ({text})")
        return text

    def placeholders(self, name: str) -> set[str]:
        """The placeholder names a prompt file uses."""
        return set(_PLACEHOLDER.findall(self.template(name)))

    def names(self) -> list[str]:
        """Every prompt of this room, by short name."""
        return sorted(p.stem[len(self.prefix):] for p in PROMPTS_DIR.glob(f"{self.prefix}*.md"))

    def render(self, name: str, **values: object) -> str:
        """The prompt with every `{{key}}` replaced; all must be given, none extra."""
        wanted = self.placeholders(name)
        missing, extra = wanted - set(values), set(values) - wanted
        if missing or extra:
            raise PromptError(
                f"prompt {self.prefix}{name}.md: missing values {sorted(missing)}, unused values {sorted(extra)}"
            )
        template = self.template(name)
        tags = own_tags(template)
        return _PLACEHOLDER.sub(lambda m: neutralize_tags(str(values[m.group(1)]), tags), template)


@lru_cache(maxsize=256)
def own_tags(template: str) -> frozenset[str]:
    """The names of the tags a prompt's own text uses (`<knowledge>` … `</knowledge>`), lowercased."""
    return frozenset(m.group(2).lower() for m in _TAG.finditer(_PLACEHOLDER.sub("", template)))


def neutralize_tags(value: str, tags: frozenset[str]) -> str:
    """`value` with every opening or closing form of `tags` written with ‹ › instead of < >, so
    inserted text cannot end or start one of the prompt's blocks.

    A form is what a reader could take for the tag: any case, spaces inside, attributes after the
    name (`</knowledge x="1">`), format characters anywhere in it (`</knowledge\u200b>`, a zero-width
    space the eye does not see), compatibility forms of the letters and brackets (`＜/knowledge＞`).
    """
    if not tags or not _ANY_OPEN.search(value):
        return value
    return _SPAN.sub(lambda m: f"‹{m.group(1)}›" if _span_tag(m.group(1)) in tags else m.group(0), value)


_ANY_OPEN = re.compile("[<\uff1c\ufe64]")
_SPAN = re.compile("[<\uff1c\ufe64]([^<>\uff1c\uff1e\ufe64\ufe65]{0,256})[>\uff1e\ufe65]")
_SPAN_NAME = re.compile(r"\s*/?\s*([A-Za-z_][\w-]*)")


def _span_tag(inner: str) -> str | None:
    """The tag name a reader sees in the text between `<` and `>`, lowercased; None for no tag."""
    seen = unicodedata.normalize("NFKC", "".join(c for c in inner if unicodedata.category(c) != "Cf"))
    match = _SPAN_NAME.match(seen)
    return match.group(1).lower() if match else None
