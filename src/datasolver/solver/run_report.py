"""What one run of solver.py says to its reader: the status line, the error or a check of
prediction.csv, what solver.py printed, and sandbox notes. Shown to the model by run_solver, traced
by the agent's fallback, printed by `datasolver solve`."""

from __future__ import annotations

import csv
import io

from datasolver.solver.checks import check_prediction
from datasolver.solver.runner import SolverRun, user_output

_CELL_CHARS = 100


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
    if show_rows and check.head:
        shown = check.head[:show_rows]
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
