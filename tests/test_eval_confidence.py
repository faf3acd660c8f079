"""The confidence rule's words and its calibration count (eval/confidence.py), shared by the Solver,
the analyst and the report."""

from __future__ import annotations

import pytest

from datasolver.eval.confidence import AnswerEvidence, calibration, confidence_reason

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize("evidence, reason", [
    (AnswerEvidence(0, True), "first query"),
    (AnswerEvidence(1, True), "one repair"),
    (AnswerEvidence(3, True), "3 repairs"),
    (AnswerEvidence(1, True, agreeing=2), "one repair, 2 candidates agree"),
    (AnswerEvidence(0, False), "failed checks"),
    (AnswerEvidence(2, True, fallback=True), "fallback"),
])
def test_the_reason_says_what_the_label_was_read_from(evidence: AnswerEvidence, reason: str) -> None:
    assert confidence_reason(evidence) == reason


def test_calibration_counts_each_label_and_how_many_of_it_were_right() -> None:
    table = calibration([("high", True), ("high", True), ("high", False), ("low", False), (None, False),
                         ("medium", None), ("odd", True)])
    # Every label is listed (high first); an answer without a label, or with a label no rule gives, is left
    # out; a task not scored counts in the label but not among the scored.
    assert [(row.label, row.answers, row.scored, row.right) for row in table] == [
        ("high", 3, 3, 2), ("medium", 1, 0, 0), ("low", 1, 1, 0)]
    assert [row.share for row in table] == [pytest.approx(2 / 3), None, 0.0]
