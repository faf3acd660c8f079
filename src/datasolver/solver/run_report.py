"""What one run of solver.py says to its reader: the status line, the error or a check of
prediction.csv, what solver.py printed, and sandbox notes. Shown to the model by run_solver, traced
by the agent's fallback, printed by `datasolver solve`."""

from __future__ import annotations

import csv
import io

from datasolver.clip import clip, clip_names
from datasolver.solver.answer_checks import CheckReport
from datasolver.solver.prediction_check import PredictionCheck, check_prediction
from datasolver.solver.runner import SolverRun, user_output

_CELL_CHARS = 100
_COLUMNS_SHOWN = 50  # a wider answer is named in part (the count says how many)


def render_run(
    run: SolverRun, *, self_check: bool = True, show_rows: int = 5, checks: CheckReport | None = None,
    prediction: PredictionCheck | None = None,
) -> str:
    """The text the model sees for one run (also printed by `datasolver solve`).

    Failed answer checks are shown as `CHECK <name>: …` lines, whatever `self_check` says.
    `prediction` is the already-read prediction.csv (read here when None).
    """
    parts = [run.status]
    if run.status == "FAILED":
        parts.append(run.error)
    elif run.status == "NO OUTPUT":
        parts.append(
            "solver.py finished but `result` is still None, so prediction.csv was not written. "
            "Assign the final DataFrame to `result` in the query area."
        )
    else:
        report = _ok_report(run, self_check, show_rows, prediction)
        if checks is not None and checks.findings:
            # Right after the shape, so clipping a long result never hides them.
            at = 3 if self_check else 1
            report.insert(at, "answer checks (fix what applies, then run again):\n" + "\n".join(checks.lines()))
        parts += report
    printed = user_output(run.sandbox)
    if printed and run.status != "FAILED":
        parts.append("solver.py printed (last lines):\n" + printed)
    parts += [f"note: {n}" for n in run.notes]
    return "\n".join(p for p in parts if p)


def _ok_report(run: SolverRun, self_check: bool, show_rows: int, check: PredictionCheck | None) -> list[str]:
    assert run.prediction is not None
    check = check if check is not None else check_prediction(run.prediction)
    n_rows, n_cols = check.shape
    if not self_check:
        return [f"prediction.csv written: {n_rows} rows × {n_cols} columns"]
    lines = [
        f"prediction.csv: {n_rows} rows × {n_cols} columns",
        "columns: " + clip_names(check.columns, _COLUMNS_SHOWN),
        "non-null per column: " + clip_names([f"{c}={n}" for c, n in zip(check.columns, check.non_null)],
                                             _COLUMNS_SHOWN),
    ]
    if show_rows and check.head:
        shown = [row[:_COLUMNS_SHOWN] for row in check.head[:show_rows]]
        more = f" (the first {_COLUMNS_SHOWN} columns)" if n_cols > _COLUMNS_SHOWN else ""
        lines.append(f"first {len(shown)} rows{more}:\n" + _csv_lines([check.columns[:_COLUMNS_SHOWN]] + shown))
    if check.warnings:
        lines.append("warnings:\n" + "\n".join(f"- {w}" for w in check.warnings))
    return lines


def _csv_lines(rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow([clip(c, _CELL_CHARS) for c in row])
    return out.getvalue().rstrip("\n")
