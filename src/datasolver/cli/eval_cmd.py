"""`datasolver eval` and `datasolver eval-compare`: score runs and compare them (thin over datasolver.eval)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from datasolver.eval import (
    DEFAULT_PENALTY,
    EvalReport,
    RunComparison,
    SeedSummary,
    compare_scores,
    evaluate_dir,
    load_report,
    paired_bootstrap,
    summarize_seeds,
)
from datasolver.eval.explain import ColumnReport
from datasolver.eval.runs import PRED_NAME

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_RUN_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
# Long lists (still-failing tasks, flaky tasks) are cut here; the JSON keeps everything.
_LIST_LIMIT = 30
_PIPE_WIDTH = 160


def _console() -> Console:
    # Created per call so CliRunner's captured stdout is used; markup off because task data
    # (values, column names) may contain square brackets.
    console = Console(markup=False, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console.width = max(console.width, _PIPE_WIDTH)  # a wrapped table is hard to grep
    return console


@click.command("eval")
@click.argument("pred_dir", type=_DIR)
@click.argument("gold_dir", type=_DIR)
@click.option("--input", "-i", "input_dir", type=_DIR, help="Task folders (<task>/task.json) to read each task's difficulty from.")
@click.option("--penalty", type=click.FloatRange(min=0), default=DEFAULT_PENALTY, show_default=True,
              help="λ: cost of each extra predicted column, as a share of the predicted columns.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Also write every task's result (with column diagnostics) to this JSON file.")
@click.option("--pred-name", default=PRED_NAME, show_default=True,
              help="File name of each prediction inside PRED_DIR/<task>/ (e.g. gold.csv to self-check gold).")
@click.option("--baseline", type=_RUN_FILE, help="A results JSON of an earlier run: list fixed, broken and still failing tasks.")
@click.option("--explain/--no-explain", default=True, show_default=True,
              help="Show, for each task below 1, the unmatched gold columns and the closest predicted column.")
@click.option("--failed-only", is_flag=True, help="List only tasks scoring below 1 in the table.")
def eval_command(
    pred_dir: Path,
    gold_dir: Path,
    input_dir: Path | None,
    penalty: float,
    json_out: Path | None,
    pred_name: str,
    baseline: Path | None,
    explain: bool,
    failed_only: bool,
) -> None:
    """Score PRED_DIR/<task>/prediction.csv against GOLD_DIR with the official metric.

    Gold is GOLD_DIR/<task>/gold.csv or GOLD_DIR/output/<task>/gold.csv. A missing
    prediction scores 0 and is listed. Prints a per-task table and the mean, overall and
    per difficulty. The exit code is 0 whatever the scores.

    Self-check of a gold set (every task must score 1.0):

    \b
        datasolver eval TASKS/output TASKS --input TASKS/input --pred-name gold.csv
    """
    base = load_report(baseline) if baseline else None
    report = evaluate_dir(pred_dir, gold_dir, input_dir, penalty, pred_name=pred_name, explain=explain)
    if json_out:
        report.save(json_out)
    console = _console()
    _print_report(console, report, failed_only=failed_only, explain=explain)
    if base is not None:
        console.print()
        console.print(f"Against baseline {baseline}:")
        _print_comparison(console, compare_scores(base.scores(), report.scores()))
    if json_out:
        console.print(f"Results written to {json_out}")


@click.command("eval-compare")
@click.argument("runs", nargs=-1, required=True, type=_RUN_FILE)
@click.option("--baseline", "-b", "baselines", multiple=True, type=_RUN_FILE,
              help="Results JSON of the system to compare against; repeat for its seeds.")
@click.option("--resamples", type=click.IntRange(min=100), default=10_000, show_default=True,
              help="Bootstrap resamples for the interval of the difference.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed of the bootstrap (results are reproducible).")
def eval_compare_command(runs: tuple[Path, ...], baselines: tuple[Path, ...], resamples: int, seed: int) -> None:
    """Summarise RUNS (results JSON files from `datasolver eval --json`, one per seed).

    For several RUNS of one system: the mean ± standard deviation of the run means and
    per-task consistency (tasks solved in some seeds but not all). With --baseline (repeat
    it for the other system's seeds): tasks newly fixed, newly broken and still failing
    (on per-task means over seeds; solved = 1.0), and a paired bootstrap 95% interval for
    the mean difference RUNS − baseline over the tasks both sides scored.

    \b
        datasolver eval-compare new_s1.json new_s2.json new_s3.json \\
            -b old_s1.json -b old_s2.json -b old_s3.json
    """
    current = [load_report(path) for path in runs]
    base = [load_report(path) for path in baselines]
    cur_summary = summarize_seeds([r.scores() for r in current])
    base_summary = summarize_seeds([r.scores() for r in base]) if base else None
    interval = (
        paired_bootstrap([r.scores() for r in base], [r.scores() for r in current], resamples=resamples, seed=seed)
        if base else None
    )
    console = _console()
    penalties = {r.penalty for r in current + base}
    if len(penalties) > 1:
        console.print(f"Warning: the runs used different penalties {sorted(penalties)}; scores are not comparable.")
    _print_seeds(console, "Runs", cur_summary)
    if base_summary is None or interval is None:
        return
    _print_seeds(console, "Baseline", base_summary)
    console.print()
    _print_comparison(console, compare_scores(base_summary.task_means(), cur_summary.task_means()))
    console.print(
        f"Difference (runs − baseline): {interval.difference:+.4f}, {interval.confidence:.0%} interval "
        f"[{interval.low:+.4f}, {interval.high:+.4f}] over {interval.tasks} tasks "
        f"(paired bootstrap, {interval.resamples} resamples; {interval.share_not_better:.1%} of resamples ≤ 0)"
    )
    console.print("The interval excludes 0." if interval.excludes_zero else "The interval includes 0: no clear difference.")


def _print_report(console: Console, report: EvalReport, *, failed_only: bool, explain: bool) -> None:
    table = Table(title=f"{report.pred_dir} vs {report.gold_dir} (λ = {report.penalty:g})")
    for name, justify in (("task", "left"), ("difficulty", "left"), ("score", "right"),
                          ("matched/gold", "right"), ("extra", "right"), ("reason", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for task in report.tasks:
        if failed_only and task.score >= 1.0:
            continue
        r = task.result
        table.add_row(task.task_id, task.difficulty, f"{r.score:.3f}", f"{r.matched}/{r.gold_cols}",
                      str(r.extra), r.reason)
    console.print(table)
    solved = sum(t.score >= 1.0 for t in report.tasks)
    console.print(f"Mean {report.mean:.4f} over {len(report.tasks)} tasks ({solved} at 1.0)")
    console.print("  " + " · ".join(f"{d} {m:.4f} ({n})" for d, (m, n) in report.by_difficulty.items()))
    if report.missing:
        console.print(f"Missing predictions ({len(report.missing)}): {', '.join(report.missing)}")
    if report.unscored:
        console.print(f"Predictions with no gold task (ignored): {', '.join(report.unscored)}")
    for warning in report.warnings:
        console.print(f"Warning: {warning}")
    if explain:
        _print_explanations(console, report)


def _print_explanations(console: Console, report: EvalReport) -> None:
    losers = [t for t in report.tasks if t.score < 1.0 and t.result.columns]
    if not losers:
        return
    console.print()
    console.print("Why tasks lost points:")
    for task in losers:
        r = task.result
        console.print(f"{task.task_id}  {r.score:.3f}  rows: pred {r.pred_rows}, gold {r.gold_rows}; "
                      f"columns: pred {r.pred_cols}, gold {r.gold_cols}")
        for column in r.columns:
            console.print("  " + _column_line(column))
        matched_preds = {c.matched_index for c in r.columns if c.matched}
        if r.extra:
            console.print(f"  extra predicted columns cost {report.penalty * r.extra / r.pred_cols:.3f}"
                          f" ({r.extra} of {r.pred_cols}, {len(matched_preds)} matched)")


def _column_line(column: ColumnReport) -> str:
    if column.matched:
        return f"✓ {column.gold_name!r} = pred {column.matched_name!r}"
    c = column.closest
    if c is None:
        return f"✗ {column.gold_name!r}: no predicted column"
    parts = [f"✗ {column.gold_name!r}: closest pred {c.pred_name!r} (#{c.pred_index + 1}"
             f"{', matched elsewhere' if c.already_matched else ''}), rows {c.pred_rows}/{c.gold_rows}, "
             f"{c.common} values in common"]
    if c.first_difference is not None:
        position, gold, pred = c.first_difference
        parts.append(f"first sorted difference at {position}: gold {gold!r} vs pred {pred!r}")
    if c.missing:
        parts.append(f"missing {c.missing}")
    if c.unexpected:
        parts.append(f"unexpected {c.unexpected}")
    return "; ".join(parts)


def _print_comparison(console: Console, comparison: RunComparison) -> None:
    console.print(f"Mean {comparison.baseline_mean:.4f} → {comparison.current_mean:.4f} ({comparison.delta:+.4f})")
    for label, entries in (("Newly fixed", comparison.fixed), ("Newly broken", comparison.broken),
                           ("Still failing", comparison.still_failing)):
        shown = ", ".join(f"{task} {old:.2f}→{new:.2f}" for task, old, new in entries[:_LIST_LIMIT])
        more = f", … {len(entries) - _LIST_LIMIT} more" if len(entries) > _LIST_LIMIT else ""
        console.print(f"{label} ({len(entries)}): {shown}{more}" if entries else f"{label} (0)")
    if comparison.only_baseline:
        console.print(f"Only in baseline: {', '.join(comparison.only_baseline)}")
    if comparison.only_current:
        console.print(f"Only in current run: {', '.join(comparison.only_current)}")


def _print_seeds(console: Console, label: str, summary: SeedSummary) -> None:
    runs = ", ".join(f"{m:.4f}" for m in summary.run_means)
    console.print(f"{label}: {len(summary.run_means)} run(s), mean {summary.mean:.4f} ± {summary.stdev:.4f} "
                  f"(per run: {runs}) over {len(summary.tasks)} tasks")
    if len(summary.run_means) > 1:
        flaky = summary.flaky
        shown = ", ".join(f"{t} ({summary.tasks[t].solved_runs}/{len(summary.run_means)})" for t in flaky[:_LIST_LIMIT])
        console.print(f"  consistency {summary.consistency:.0%} (tasks solved in every run or none); "
                      f"flaky ({len(flaky)}): {shown or '-'}")
    if summary.partial_tasks:
        console.print(f"  left out (not in every run): {', '.join(summary.partial_tasks)}")


COMMANDS = [eval_command, eval_compare_command]
