"""run_solver: run workdir/solver.py in the sandbox and report OK / NO OUTPUT / FAILED."""

from __future__ import annotations

import csv
import dataclasses
import io

from pydantic import BaseModel, Field

from datasolver.solver.checks import check_prediction
from datasolver.solver.runner import SolverRun, run_solver_script, user_output
from datasolver.solver.tools.base import ToolContext, ToolResult

MAX_TIMEOUT_S = 600
MAX_SHOW_ROWS = 50
_CELL_CHARS = 100


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


def render_run(run: SolverRun, *, self_check: bool = True, show_rows: int = 5) -> str:
    """The text the model sees for one run (also printed by `datasolver solve`)."""
    parts = [run.status]
    if run.status == "FAILED":
        parts.append(run.error)
    elif run.status == "NO OUTPUT":
        parts.append(
            "solver.py finished but `result` is still None, so prediction.csv was not written. "
            "Assign the final DataFrame to `result` in the query area."
        )
    else:
        parts += _ok_report(run, self_check, show_rows)
    printed = user_output(run.sandbox)
    if printed and run.status != "FAILED":
        parts.append("solver.py printed (last lines):\n" + printed)
    parts += [f"note: {n}" for n in run.notes]
    return "\n".join(p for p in parts if p)


def _ok_report(run: SolverRun, self_check: bool, show_rows: int) -> list[str]:
    assert run.prediction is not None
    check = check_prediction(run.prediction)
    n_rows, n_cols = check.shape
    if not self_check:
        return [f"prediction.csv written: {n_rows} rows × {n_cols} columns"]
    lines = [
        f"prediction.csv: {n_rows} rows × {n_cols} columns",
        "columns: " + ", ".join(check.columns),
        "non-null per column: " + ", ".join(f"{c}={n}" for c, n in zip(check.columns, check.non_null)),
    ]
    if show_rows and check.rows:
        shown = check.rows[:show_rows]
        lines.append(f"first {len(shown)} rows:\n" + _csv_lines([check.columns] + shown))
    if check.warnings:
        lines.append("warnings:\n" + "\n".join(f"- {w}" for w in check.warnings))
    return lines


def _csv_lines(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([c if len(c) <= _CELL_CHARS else c[:_CELL_CHARS] + "…" for c in row])
    return out.getvalue().rstrip("\n")
