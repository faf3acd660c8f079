"""Word overlap between a question and a table's text: the one cheap relevance measure.

The agent ranks tables with it to fold the first prompt (`agent.relevance`); run_solver's NO OUTPUT
advice names the likeliest table with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_WORD = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_]|[-./](?=[A-Za-z0-9_])){2,}")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")


def question_terms(text: str) -> set[str]:
    """Lower-cased Latin words of 3+ characters (`2024-03` is one word) and every pair of adjacent
    CJK characters."""
    terms = {w.lower() for w in _WORD.findall(text)}
    for run in _CJK_RUN.findall(text):
        terms.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            terms.add(run)
    return terms


def term_overlap(question: str, texts: Mapping[str, str]) -> dict[str, float]:
    """Per key: how many of the question's terms occur in its text (case-insensitive)."""
    terms = question_terms(question)
    return {key: float(sum(1 for t in terms if t in text.lower())) for key, text in texts.items()}


def likeliest(question: str, texts: Mapping[str, str]) -> str | None:
    """The key whose text shares most with the question, or None when none shares anything.

    Both ways: the question's terms found in the text, and the text's words found in the
    question (a table `paper` for "the papers …"); among equals, the first key.
    """
    asked = question.lower()
    forward = term_overlap(question, texts)
    best, best_score = None, 0.0
    for key, text in texts.items():
        backward = sum(1 for word in question_terms(text) if word in asked)
        score = forward[key] + backward
        if score > best_score:
            best, best_score = key, score
    return best
