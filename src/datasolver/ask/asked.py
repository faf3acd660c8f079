"""What a question asks for, read from its words: one value or several (a list, a value per group),
how many when it says (`top 5`, `前3`), and which of a result's columns it names.

Deliberately cautious: a question counts as asking for several values only on a clear sign
("what are", "list", "each", "and their", "哪些", "各", "分别" …), and "which of A or B" / "哪个" /
"哪家" always asks for one. The analyst writes a result's rows into an answer only when the
question asks for several (ask/checks.py).
"""

from __future__ import annotations

import re
import unicodedata

_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                 "九": 9, "十": 10}
_COUNT_WORD = r"(\d+|two|three|four|five|six|seven|eight|nine|ten)"
_ASKED_COUNT = re.compile(
    rf"\b(?:top|first|last|bottom)\s+{_COUNT_WORD}\b|\b{_COUNT_WORD}\s+(?:\w+est|most|least|largest|highest)\b"
    r"|前\s*(\d+|[二两三四五六七八九十])\s*(?:名|个|位|家|大)?", re.IGNORECASE)
_MANY = re.compile(
    r"\b(?:what|which|who)\s+are\b|\b(?:what|which|who)\s+were\b|\bwhich\s+\w+(?:\s+\w+)?\s+(?:are|were|have|do)\b|\bwhich\s+\w+s\b"
    r"|\blist\b|\bnames\s+of\b|\beach\b|\bper\b|\bevery\b|\ball\s+(?:the\s+)?\w+s\b|\band\s+(?:their|its)\b"
    r"|\bwith\s+(?:their|the\s+\w+s?\s*$)|\bordered\b|\bsorted\b|\border\s+by\b|\b(?:descending|ascending)\b"
    r"|\b(?:get|show|give|find|return)\s+(?:me\s+)?(?:all\s+|the\s+)?\w+s\b"
    r"|哪些|各|每|分别|列出|所有|依次|排序|排名|[两二三四五六七八九十几]个|这些",
    re.IGNORECASE)
_ONE = re.compile(r"\bwhich\s+(?:one|of)\b.*\bor\b|\bwhich\s+one\b|\bwhether\b|哪个|哪一|哪家|哪位|是否|谁", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SPLIT = re.compile(r"[^0-9A-Za-z\u3400-\u9fff]+")


def asks_for_many(question: str) -> bool:
    """True when the question clearly asks for several values: a list, top N (N ≥ 2), a value per group."""
    text = unicodedata.normalize("NFKC", question or "")
    if _ONE.search(text):
        return False
    count = asked_count(text)
    if count is not None:
        return count >= 2
    return _MANY.search(text) is not None


def asked_count(question: str) -> int | None:
    """N of `top N`, `first N`, `N largest`, `前N名`, when the question says it."""
    match = _ASKED_COUNT.search(unicodedata.normalize("NFKC", question or ""))
    if match is None:
        return None
    word = next(g for g in match.groups() if g)
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word.lower())


def names_column(question: str, column: str) -> bool:
    """Whether the question names a result column: one of its words (3+ letters, a trailing `s`
    ignored) in the question, or its CJK name (units in parentheses left out) inside it."""
    asked = unicodedata.normalize("NFKC", question or "").casefold()
    name = unicodedata.normalize("NFKC", re.sub(r"[(（][^)）]*[)）]", " ", column))
    words = [w for w in _SPLIT.split(_CAMEL.sub(" ", name).casefold()) if w]
    for word in words:
        if re.search(r"[\u3400-\u9fff]", word):
            if len(word) >= 2 and word in asked:
                return True
        elif len(word) >= 3:
            stem = word.removesuffix("s")
            forms = [re.escape(stem) + "s?"] + ([re.escape(stem[:-1]) + "ies"] if stem.endswith("y") else [])
            if re.search(r"\b(?:" + "|".join(forms) + r")\b", asked):
                return True
    return False
