"""run_solver: run workdir/solver.py in the sandbox and report OK / NO OUTPUT / FAILED."""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, Field

from datasolver.solver.run_report import render_run
from datasolver.solver.runner import run_solver_script
from datasolver.solver.tools.base import ToolContext, ToolResult

MAX_TIMEOUT_S = 600
MAX_SHOW_ROWS = 50


class RunSolverArgs(BaseModel):
    """Arguments of run_solver."""

    self_check: bool = True
    show_rows: int = Field(5, ge=0)
    timeout: int = Field(120, ge=1)


def run_solver(ctx: ToolContext, self_check: bool = True, show_rows: int = 5, timeout: int = 120) -> ToolResult:
    """Run workdir/solver.py; when it assigns a DataFrame to `result`, prediction.csv is written.

    The first line of the answer is exactly one of FAILED (with the error first, then where in
    solver.py), NO OUTPUT (it ran but `result` is still None), or OK (prediction.csv written,
    followed by a check of its contents and warnings).

    Args:
        self_check: After OK, show shape, column names, non-null counts, first rows and warnings (duplicate rows, all-null columns, an index-like first column).
        show_rows: How many rows of prediction.csv to show after OK.
        timeout: Wall-clock seconds before the run is killed (at most 600).
    """
    limits = dataclasses.replace(ctx.limits, timeout_s=float(min(timeout, MAX_TIMEOUT_S)))
    run = run_solver_script(ctx.layout, limits)
    return ToolResult(render_run(run, self_check=self_check, show_rows=min(show_rows, MAX_SHOW_ROWS)),
                      "ok" if run.status == "OK" else "failed")
