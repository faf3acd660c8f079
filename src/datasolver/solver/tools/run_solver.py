"""run_solver: run workdir/solver.py in the sandbox and report OK / NO OUTPUT / FAILED."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import BaseModel, Field

from datasolver.solver.answer_checks import check_answer
from datasolver.solver.prediction_check import check_prediction
from datasolver.solver.run_report import render_run
from datasolver.solver.runner import run_solver_script
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.next_step import no_output_next_step
from datasolver.toolkit import ToolResult

MAX_TIMEOUT_S = 600
MAX_SHOW_ROWS = 50
SANDBOX_GRACE_S = 30
"""A loop waits this much longer than its tool timeout for run_solver: the sandbox kills the run
at run_solver's own timeout (capped to the loop's by `cap_timeout`), then the report follows."""


def run_solver(
    ctx: ToolContext,
    self_check: bool = True,
    show_rows: Annotated[int, Field(ge=0)] = 5,
    timeout: Annotated[float, Field(gt=0)] = 120,
) -> ToolResult:
    """Run workdir/solver.py; when it assigns a DataFrame to `result`, prediction.csv is written.

    The first line of the answer is exactly one of FAILED (with the error first, then where in
    solver.py), NO OUTPUT (it ran but `result` is still None), or OK (prediction.csv written,
    followed by a check of its contents and warnings).

    Args:
        self_check: After OK, show shape, column names, non-null counts and first rows. Failed answer checks are always shown, one `CHECK <name>: …` line each (helper or constant columns, two columns computed alike, duplicate rows, an empty result and which filter emptied it, all-NULL columns, a LIMIT that cut a tie, typed-in values, numbers with units, early rounding, one row for a range of periods, both of two when one is asked, a count for a ratio).
        show_rows: How many rows of prediction.csv to show after OK.
        timeout: Wall-clock seconds before the run is killed (fractions allowed; at most 600).
    """
    limits = dataclasses.replace(ctx.limits, timeout_s=float(min(timeout, MAX_TIMEOUT_S)))
    # The tables the agent's catalog already loaded are queried as they are, not read again.
    run = run_solver_script(ctx.layout, limits, loaded_catalog=ctx.open_catalog().loaded_file())
    report = prediction = None
    if run.status == "OK" and run.prediction is not None and ctx.answer_checks:
        prediction = check_prediction(run.prediction, answer_checked=True)
        report = check_answer(ctx.layout, ctx.task.question, prediction, ctx.open_catalog(), ctx.task.shape)
    text = render_run(run, self_check=self_check, show_rows=min(show_rows, MAX_SHOW_ROWS), checks=report,
                      prediction=prediction)
    if run.status == "NO OUTPUT":
        text += "\n" + no_output_next_step(ctx.layout, ctx.open_catalog())
    # The check report rides along for the program (the agent's send-back), not for the model.
    return ToolResult(text, "ok" if run.status == "OK" else "failed", value=report)


def cap_timeout(args: BaseModel, tool_timeout_s: float) -> BaseModel:
    """run_solver's own timeout may not exceed the loop's tool timeout, nor the task's time left (the runner
    passes the smaller)."""
    return args.model_copy(update={"timeout": tool_timeout_s}) if getattr(args, "timeout", 0) > tool_timeout_s else args
