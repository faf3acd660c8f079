"""Text answers (the `ask` mode): Jaccard similarity of normalized answer tokens.

Tokens: each CJK character alone; Latin (and other alphabetic) words, lower-cased; numbers
canonical (grouping commas dropped, trailing zeros dropped: "1,234.50" → "1234.5"); unit and
currency symbols (%, ‰, °, $, ¥, …) kept as tokens; other punctuation dropped. NFKC first, so
full-width "１２％" reads as "12%" and "℃" as "°C". See docs/eval.md.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

# Han (with extensions and compatibility ideographs), kana and CJK marks: one token each.
_CJK = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b"
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0003134f"
)
_TOKEN = re.compile(
    rf"(?P<cjk>[{_CJK}])"
    # A minus sign counts only where it cannot be a range or a date dash ("2020-2021").
    rf"|(?P<number>(?:(?<![0-9A-Za-z.])-)?\d+(?:,\d{{3}})*(?:\.\d+)?)"
    rf"|(?P<word>(?:(?![{_CJK}])[^\W\d_])+(?:'(?:(?![{_CJK}])[^\W\d_])+)*)"
    r"|(?P<other>\S)"
)
_UNIT_MARKS = frozenset("%‰‱°′″")


def answer_tokens(text: str) -> set[str]:
    """The normalized token set of an answer (the unit of the Jaccard score)."""
    text = unicodedata.normalize("NFKC", text or "")
    tokens: set[str] = set()
    for match in _TOKEN.finditer(text):
        kind, token = match.lastgroup, match.group()
        if kind == "number":
            tokens.add(_canonical_number(token))
        elif kind == "word":
            tokens.add(token.lower())
        elif kind == "cjk":
            tokens.add(token)
        elif token in _UNIT_MARKS or unicodedata.category(token).startswith("S"):
            tokens.add(token)  # currency and other symbols carry meaning; punctuation does not
    return tokens


def score_text(prediction: str, reference: str) -> float:
    """Jaccard similarity |P ∩ R| / |P ∪ R| of the answer token sets; two empty answers score 1."""
    pred, ref = answer_tokens(prediction), answer_tokens(reference)
    if not pred and not ref:
        return 1.0
    return len(pred & ref) / len(pred | ref)


def _canonical_number(token: str) -> str:
    try:
        value = Decimal(token.replace(",", ""))
    except InvalidOperation:  # cannot happen for the regex's shape; keep the text if it does
        return token
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "0") else text
