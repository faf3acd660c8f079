"""The analyst's confidence label: its own evidence mapped onto the one rule (`eval/confidence.py`).

    the direct path's answer           a repair round per query tried before the answering one
                                       (a repair turn, or the program's rewrite of a query)
    the tool loop's answer             one round (the loop is one attempt, as a Solver loop answer's),
                                       one more when the direct path ran and gave no answer
    each send-back or rewrite of the   one more round
    answer checks (`ASK_CHECKS`)
    an answer no stored result backs   failed checks
    the program wrote the latest       the fallback (no model answer was accepted)
    result as the answer (`no_answer`)
    no answer at all                   no label

The analyst draws no candidates (its direct step samples none, one query a turn), so agreement never
raises its label and its answers are never 'high': a direct query passing its checks the first time is
medium, as the Solver's is. That is intended: on dev with the real model such first-shot answers were
right about half the time (the calibration in `eval/confidence.py`); 'high' needs candidates that agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from datasolver.ask.checks import CheckEvent
from datasolver.direct_step import DirectOutcome
from datasolver.eval.confidence import AnswerEvidence

REPAIR_ACTIONS = frozenset({"sent_back", "rewrote"})


@dataclass(frozen=True)
class AskEvidence:
    """What one question's answer came to, as the label reads it."""

    path: str  # direct | loop
    direct: DirectOutcome  # the direct step's candidates (none when it was off)
    direct_ran: bool
    checks: list[CheckEvent]
    backed: bool  # a stored result backs the answer
    written_by_program: bool  # the model gave no answer; the program wrote the latest result
    answered: bool  # False: no answer at all (`[no answer: …]`)

    def evidence(self) -> AnswerEvidence | None:
        """The evidence of the one rule; None without an answer."""
        if not self.answered:
            return None
        if self.path == "direct" and self.direct.chosen is not None:
            rounds = self.direct.candidates.index(self.direct.chosen)
        else:
            rounds = 1 + int(self.direct_ran)
        rounds += sum(1 for event in self.checks if event.action in REPAIR_ACTIONS)
        return AnswerEvidence(rounds, self.backed, fallback=self.written_by_program)


__all__ = ["AskEvidence"]
