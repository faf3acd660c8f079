"""Asked-items coverage: which of a result's columns a question names.

The analyst's `partial_list` check (ask/checks.py) and the Solver's `asked_items` answer check
(solver/answer_checks/asked.py) read it; it lives in the data room, the floor both import. One value
or several, and how many, are facts of the question's shape, read once (`data/question_shape.py`:
`QuestionShape.asks_many`, `.count`).
"""

from __future__ import annotations

import re
import unicodedata

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_SPLIT = re.compile(r"[^0-9A-Za-z\u3400-\u9fff]+")


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
