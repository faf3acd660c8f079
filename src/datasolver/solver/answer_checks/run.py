"""Run every answer check on one OK run of solver.py and collect the failed ones."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.data.layout import ScratchLayout
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.answer_checks import code, queries, question, shape
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding, read_query_log
from datasolver.solver.checks import PredictionCheck
from datasolver.solver.checks import PREDICTION_MAX_BYTES

if TYPE_CHECKING:
    from datasolver.data import Catalog

Check = Callable[[AnswerContext], list[CheckFinding]]

ANSWER_CHECKS: tuple[tuple[str, Check], ...] = (
    ("helper_column", shape.helper_column),
    ("constant_column", shape.constant_column),
    ("duplicate_rows", shape.duplicate_rows),
    ("empty_result", queries.empty_result),
    ("all_null_column", shape.all_null_column),
    ("ties_cut", queries.ties_cut),
    ("literal_answer", code.literal_answer),
    ("text_numbers", shape.text_numbers),
    ("early_rounding", code.early_rounding),
    ("range_rows", question.range_rows),
    ("both_of_two", question.both_of_two),
    ("ratio_count", question.ratio_count),
)


@dataclass
class CheckReport:
    """The failed checks of one run, how long they took, and why any check could not run."""

    findings: list[CheckFinding] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.findings]

    @property
    def blocking(self) -> list[CheckFinding]:
        """Findings worth a send-back (not the ones that only inform)."""
        return [f for f in self.findings if not f.informs_only]

    def lines(self) -> list[str]:
        return [f.line() for f in self.findings]


def run_answer_checks(ctx: AnswerContext) -> CheckReport:
    """Every check in ANSWER_CHECKS order; a check that crashes is a note, never a failed answer."""
    started = time.perf_counter()
    report = CheckReport(notes=ctx.notes)
    for name, check in ANSWER_CHECKS:
        try:
            report.findings += check(ctx)
        except Exception as exc:  # a check bug must not hide the answer; the note says what broke
            ctx.notes.append(f"{name} crashed: {type(exc).__name__}: {exc}")
    report.seconds = time.perf_counter() - started
    return report


def answer_context(layout: ScratchLayout, question: str, prediction: PredictionCheck,
                   catalog: Catalog | None) -> AnswerContext:
    """The context of the run that just wrote `prediction` in `layout`, for the task asking `question`."""
    return AnswerContext(
        question=question,
        code=_read_safely(layout.solver_py, safe_files.DEFAULT_READ_CAP),
        queries=read_query_log(_read_safely(layout.query_log, PREDICTION_MAX_BYTES)),
        columns=list(prediction.columns),
        rows=prediction.sample,  # the first SAMPLE_ROWS rows, read once with the self-check
        catalog=catalog,
        total_rows=prediction.n_rows,
        non_null=list(prediction.non_null),
    )


def check_answer(layout: ScratchLayout, question: str, prediction: PredictionCheck,
                 catalog: Catalog | None) -> CheckReport:
    return run_answer_checks(answer_context(layout, question, prediction, catalog))


def _read_safely(path: Path, cap: int) -> str:
    """A file the sandbox could write (workdir/, tmp/), read without following a planted link or
    opening a FIFO; empty when it is not a regular file within `cap`."""
    try:
        return safe_files.read_text(path, max_bytes=cap, errors="replace")
    except (UnsafeFile, OSError):
        return ""
