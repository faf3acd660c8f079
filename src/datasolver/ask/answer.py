"""Final answers: template filling and light tidying for text-metric scoring."""

from __future__ import annotations

import re

# `{DATA}` as asked; `{{DATA}}`, `{ data }` accepted too (models vary the spelling).
PLACEHOLDER = re.compile(r"\{\{?\s*DATA\s*\}\}?", re.IGNORECASE)
_LEAD = re.compile(r"^(?:final answer|answer|the answer is|答案|回答|答)\s*[:：]\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)、])\s+")
_WRAPPERS = (("**", "**"), ('"', '"'), ("“", "”"), ("`", "`"))
# Tool-call wrappers a small model writes around nothing (`<tools>\n\n</tools>`): markup, never an answer.
_CALL_MARKUP = re.compile(r"</?\s*(?:tools|tool_call|tool_calls|function_calls|tool_response)\s*>", re.IGNORECASE)


def without_call_markup(text: str) -> str:
    """The reply's text with tool-call wrapper tags removed ("" when that is all it was)."""
    return _CALL_MARKUP.sub(" ", text or "").strip()


def has_placeholder(text: str) -> bool:
    """True when the answer is a template with a {DATA} placeholder."""
    return bool(PLACEHOLDER.search(text or ""))


def fill_template(template: str, data: str) -> str:
    """Put `data` (the complete rendered result) where the template says {DATA}."""
    return PLACEHOLDER.sub(lambda _: data, template)


def tidy_answer(text: str) -> str:
    """Strip labels ("Answer:"), wrapping quotes or bold; a bullet list becomes comma-separated."""
    text = without_call_markup(text)
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and sum(bool(_BULLET.match(line)) for line in lines) >= len(lines) - 1:
        head = [] if _BULLET.match(lines[0]) else [lines[0].strip()]
        items = [_BULLET.sub("", line).strip() for line in lines[len(head):]]
        text = (head[0] + " " if head else "") + ", ".join(items)
    text = " ".join(text.split())
    changed = True
    while changed:
        changed = False
        stripped = _LEAD.sub("", text).strip()
        for left, right in _WRAPPERS:
            if len(stripped) > len(left) + len(right) and stripped.startswith(left) and stripped.endswith(right):
                stripped = stripped[len(left): -len(right)].strip()
        if stripped != text:
            text, changed = stripped, True
    return text


_LEAD_COLON = re.compile(r"^(?P<lead>[^:：]{8,200})[:：]\s*(?P<rest>\S.*)$", re.DOTALL)
_WORDS = re.compile(r"[\u3400-\u9fff]|[^\W\d_\u3400-\u9fff]+")


def restates(text: str, question: str, share: float = 0.6) -> bool:
    """Whether `text` mostly repeats the question's words (a lead-in such as "The titles of the
    publications … are"): at least `share` of its words (CJK characters one by one) are the question's."""
    words = [w.casefold() for w in _WORDS.findall(text)]
    asked = {w.casefold() for w in _WORDS.findall(question)}
    return len(words) >= 3 and sum(w in asked for w in words) >= share * len(words)


def drop_restated_lead(text: str, question: str) -> str:
    """The answer without a lead-in that restates the question ("The cities in X are: A, B" → "A, B")."""
    match = _LEAD_COLON.match(text or "")
    if match is None or not restates(match.group("lead"), question):
        return text
    return match.group("rest").strip()

