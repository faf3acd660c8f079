"""The confidence label of an answer (issue 46): high, medium or low, from how it was reached.

One rule for every answer: the Solver's (`agent/solve.py`), the analyst's (`ask/confidence.py` maps its
own evidence onto it) and the report's calibration table (`calibration`). It lives here, the lowest
room the three may import.

Answers that needed repeated repair rounds are right far less often than first-shot ones (64% vs
91% in one public run, shared/NOTES.md), so the label reads the repair rounds, whether the published
answer passed its answer checks, and how many candidates agreed with it:

    fallback, or failed checks             low
    first query, checks pass               medium
    one repair round                       medium
    REPAIRS_LOW rounds or more             low
    AGREEING candidates or more agree      one step up (low -> medium -> high), never past a fallback
                                           or failed checks

So 'high' needs the agreement of independent candidates: AGREEING or more with the same answer, checks
passing, fewer than REPAIRS_LOW repair rounds. A first query passing its checks alone is medium.

Calibration (issue 46's target: 'high' >= 90% right, 'low' <= 50%), measured with the real 1.5B model
(Qwen2.5-Coder-1.5B, llama.cpp) on dev / dev-en tasks, the Solver's labels under the earlier rule
(first query with checks passing was high) against the official scorer, one run each, 2026-12-07:

    run `unread1` (24 tasks)   high 13 -> 6 right (46%), mean score 0.59; medium 5 -> 2 right (40%),
                               mean 0.78; low 2 -> 0 right; 4 tasks no answer
    run `mix8a` (8 tasks)      high 4 -> 3 right (75%); medium 1 -> 0 right; low 2 -> 0 right
    together                   high 17 -> 9 right (53%); medium 6 -> 2 right; low 4 -> 0 right

A first query passing its answer checks was right about half the time with this model, far from what a
'high' label promises, so it is medium now: relabelled by this rule, the same answers are medium 23 -> 11
right (48%), low 4 -> 0 right, none high (every 'high' of `mix8a` was a first query with one candidate;
`unread1`'s were not checked for agreement). 'low' met its target (0 of 4). The samples are small (32
tasks, one run of each set); the 'high' of agreeing candidates is not yet measured, and the Solver
seldom gives it (its samples come only after the direct query and its repair failed, two rounds).
"""

from __future__ import annotations

from collections.abc import Iterable
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
    level = 1 if rounds < REPAIRS_LOW else 0  # high only from agreement (module docstring: calibration)
    if evidence.agreeing >= AGREEING:
        level = min(level + 1, 2)
    return LEVELS[level]


def confidence_reason(evidence: AnswerEvidence) -> str:
    """What the label was read from, in a few words (`first query`, `one repair, 2 candidates agree`)."""
    if evidence.fallback:
        return "fallback"
    if not evidence.checks_pass:
        return "failed checks"
    rounds = max(evidence.repair_rounds, 0)
    words = "first query" if rounds == 0 else "one repair" if rounds == 1 else f"{rounds} repairs"
    if evidence.agreeing >= AGREEING:
        words += f", {evidence.agreeing} candidates agree"
    return words


@dataclass(frozen=True)
class LabelCount:
    """One label's row of a calibration table: answers with it, how many were scored, how many right."""

    label: str
    answers: int
    scored: int
    right: int

    @property
    def share(self) -> float | None:
        """The share of scored answers that were right; None when none was scored."""
        return self.right / self.scored if self.scored else None


def calibration(answers: Iterable[tuple[str | None, bool | None]]) -> list[LabelCount]:
    """Per label (high first): how many answers carry it, how many were scored, how many right. Each answer
    is (label, right), right None when not scored; an answer without a label (or with one the rule never
    gives) is left out. Issue 46's target: 'high' >= 90% right, 'low' <= 50%."""
    pairs = [(label, right) for label, right in answers if label in LEVELS]
    return [LabelCount(label, sum(1 for lab, _ in pairs if lab == label),
                       sum(1 for lab, r in pairs if lab == label and r is not None),
                       sum(1 for lab, r in pairs if lab == label and r))
            for label in reversed(LEVELS)]
