"""Answer checks: deterministic checks of an OK run (solver.py, its final SQL, prediction.csv).

Each failed check is one line `CHECK <name>: <what is wrong, with numbers, and what to do>`.
They inform; the agent decides what to do with them (send the model back once, then accept).
"""

from datasolver.solver.answer_checks.model import (
    CHECK_NAMES,
    INFORMS_ONLY,
    AnswerContext,
    CheckFinding,
    check_names_in,
    read_query_log,
)
from datasolver.solver.answer_checks.run import ANSWER_CHECKS, CheckReport, answer_context, check_answer, run_answer_checks

__all__ = [
    "ANSWER_CHECKS",
    "CHECK_NAMES",
    "INFORMS_ONLY",
    "AnswerContext",
    "CheckFinding",
    "CheckReport",
    "answer_context",
    "check_answer",
    "check_names_in",
    "read_query_log",
    "run_answer_checks",
]
