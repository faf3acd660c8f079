"""The confidence label of an answer (issue 46): high, medium or low, from how it was reached.

Answers that needed repeated repair rounds are right far less often than first-shot ones (64% vs
91% in one public run, shared/NOTES.md), so the label reads the repair rounds, whether the published
answer passed its answer checks, and how many candidates agreed with it:

    fallback, or failed checks             low
    first query, checks pass               high
    one repair round                       medium
    REPAIRS_LOW rounds or more             low
    AGREEING candidates or more agree      one step up (low -> medium -> high), never past a fallback

Not yet calibrated on dev with the real model (issue 46's target: 'high' >= 90% right, 'low' <= 50%).
"""

from __future__ import annotations

from dataclasses import dataclass

HIGH, MEDIUM, LOW = "high", "medium", "low"
LEVELS = (LOW, MEDIUM, HIGH)
FALLBACK_CONFIDENCE = LOW  # an answer no model run gave (the pipeline's own fallback too)
REPAIRS_LOW = 2  # repair rounds from which an answer is low
AGREEING = 2  # candidates with the same answer that raise the label one step


@dataclass(frozen=True)
class AnswerEvidence:
    """How a published answer was reached."""

    repair_rounds: int  # 0: the first query; each repair, sample after a failure or later attempt adds one
    checks_pass: bool  # the published answer passed its answer checks
    fallback: bool = False  # published by the fallback (no model answer accepted)
    agreeing: int = 1  # candidates whose answer is the same as the published one (itself included)


def confidence(evidence: AnswerEvidence) -> str:
    """The label (`HIGH`, `MEDIUM` or `LOW`) of an answer reached as ``evidence`` says."""
    if evidence.fallback:
        return FALLBACK_CONFIDENCE
    if not evidence.checks_pass:
        return LOW
    rounds = max(evidence.repair_rounds, 0)
    level = 2 if rounds == 0 else 1 if rounds < REPAIRS_LOW else 0
    if evidence.agreeing >= AGREEING:
        level = min(level + 1, 2)
    return LEVELS[level]
