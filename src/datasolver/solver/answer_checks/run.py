"""Run every answer check on one OK run of solver.py and collect the failed ones."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.data.layout import ScratchLayout
from datasolver.data.question_shape import QuestionShape
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.answer_checks import asked, code, queries, question, shape
from datasolver.solver.answer_checks.model import CHECKS_BUDGET_S, AnswerContext, CheckFinding, read_query_log
from datasolver.solver.prediction_check import PredictionCheck

QUERY_LOG_TAIL_BYTES = 4 << 20
"""How much of run_sql's log the checks read, from its end (a query run in a loop can make it long)."""

if TYPE_CHECKING:
    from datasolver.data import Catalog

Check = Callable[[AnswerContext], list[CheckFinding]]

ANSWER_CHECKS: tuple[tuple[str, Check], ...] = (
    ("helper_column", shape.helper_column),
    ("constant_column", shape.constant_column),
    ("same_expression", shape.same_expression),
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
    ("asked_items", asked.asked_items),
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
                   catalog: Catalog | None, shape: QuestionShape | None = None) -> AnswerContext:
    """The context of the run that just wrote `prediction` in `layout`, for the task asking `question`
    (whose `shape`, read once, the task carries: `Task.shape`; read here when not given).

    solver.py wrote workdir/ and tmp/: its code and run_sql's log are read capped, never followed,
    and the log's lines as untrusted JSON (the launcher's facts pipe is closed before solver.py
    starts, so no channel from inside can be trusted more than the file); its queries re-run on the
    parent's catalog under `QUERY_TIMEOUT_S` each and `CHECKS_BUDGET_S` in all."""
    notes: list[str] = []
    return AnswerContext(
        question=question,
        code=_read_safely(layout.solver_py, safe_files.DEFAULT_READ_CAP),
        queries=read_query_log(_read_log_tail(layout, notes), notes),
        columns=list(prediction.columns),
        rows=prediction.sample,  # the first rows (checks.kept_rows), read once with the self-check
        catalog=catalog,
        notes=notes,
        total_rows=prediction.n_rows,
        non_null=list(prediction.non_null),
        deadline=time.monotonic() + CHECKS_BUDGET_S,
        shape=shape,
    )


def check_answer(layout: ScratchLayout, question: str, prediction: PredictionCheck,
                 catalog: Catalog | None, shape: QuestionShape | None = None) -> CheckReport:
    return run_answer_checks(answer_context(layout, question, prediction, catalog, shape))


def _read_log_tail(layout: ScratchLayout, notes: list[str]) -> str:
    """The last QUERY_LOG_TAIL_BYTES of run_sql's log (the final query is its last line)."""
    try:
        data, cut = safe_files.read_tail(layout.query_log, max_bytes=QUERY_LOG_TAIL_BYTES)
    except FileNotFoundError:
        return ""
    except (UnsafeFile, OSError) as exc:
        notes.append(f"run_sql's log not read: {exc}")
        return ""
    if cut:  # the first line may be a part of one
        data = data.partition(b"\n")[2]
        notes.append(f"run_sql's log is over {QUERY_LOG_TAIL_BYTES:,} bytes: only its last lines were read")
    return data.decode("utf-8", errors="replace")


def _read_safely(path: Path, cap: int) -> str:
    """A file the sandbox could write (workdir/, tmp/), read without following a planted link or
    opening a FIFO; empty when it is not a regular file within `cap`."""
    try:
        return safe_files.read_text(path, max_bytes=cap, errors="replace")
    except (UnsafeFile, OSError):
        return ""
