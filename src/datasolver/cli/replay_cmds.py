"""`datasolver replay` (a recorded run again, with no model) and `datasolver report` (HTML).
Thin over datasolver.pipeline.replay and datasolver.report: parse flags, one library call, print
(library errors become `Error: …` in the command group)."""

from __future__ import annotations

from pathlib import Path

import click

from datasolver.pipeline import make_progress
from datasolver.terminal import printable

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("replay")
@click.argument("logs_dir", type=_DIR)
@click.argument("input_dir", type=_DIR)
@click.argument("output_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--tasks", "task_ids", metavar="ID,ID", help="Only these recorded task ids.")
@click.option("--workers", type=click.IntRange(min=1), default=4, show_default=True, help="Tasks replayed at once.")
@click.option("--gold", "gold_dir", type=_DIR, help="Gold answers: also show each task's score change "
              "(fixed, broken, same) from the recorded prediction to the replayed one.")
@click.option("--logs", "replay_logs", type=click.Path(file_okay=False, path_type=Path),
              help="Traces of the replay. Default: OUTPUT_DIR-replay-logs beside the output.")
def replay_command(logs_dir: Path, input_dir: Path, output_dir: Path, task_ids: str | None, workers: int,
                   gold_dir: Path | None, replay_logs: Path | None) -> None:
    """Re-run a recorded run with the current code, answering every model request from LOGS_DIR.

    LOGS_DIR holds a run's traces (<task_id>/trace.jsonl, run_summary.json). Each task is solved
    again from INPUT_DIR into OUTPUT_DIR by the real pipeline (prepare, prompts, tools, checks,
    attempts, fallback), but the model's answers are the recorded ones, in order: no endpoint is
    contacted and no token is spent. Per task it prints `identical`, `diverged at request k` (with
    what changed first: a tool result, a prompt, a check) or `recording incomplete`, and the old and
    new prediction signatures; OUTPUT_DIR/replay_summary.json holds the same and the short diffs.
    """
    from datasolver.pipeline.replay import REPLAY_SUMMARY_FILE, replay_run  # loaded when used: a fast CLI start

    wanted = tuple(t.strip() for t in task_ids.split(",") if t.strip()) if task_ids else None
    summary = replay_run(logs_dir, input_dir, output_dir, logs_dir=replay_logs, task_ids=wanted,
                         workers=workers, gold_dir=gold_dir, progress=make_progress())
    for task in sorted(summary.tasks, key=lambda t: t.task_id):
        click.echo(printable(task.line()))  # diffs and notes quote the recorded (anyone's) text
        if task.divergence is not None and task.divergence.diff:
            for line in task.divergence.diff.splitlines():
                click.echo(printable(f"    {line}"))
        for note in task.notes:
            click.echo(printable(f"    note: {note}"))
    counts = summary.counts()
    click.echo(", ".join(f"{k} {v}" for k, v in counts.items()) + f" in {summary.seconds:.1f}s")
    click.echo(f"summary: {Path(output_dir) / REPLAY_SUMMARY_FILE}")


@click.command("report")
@click.argument("logs_dir", type=_DIR)
@click.option("--gold", "gold_dir", type=_DIR, help="Gold answers: scores, a score histogram, and prediction "
              "vs gold per task (matched, missed and extra columns).")
@click.option("--predictions", "predictions_dir", type=_DIR,
              help="With --gold: the run's output folder, whose <task_id>/prediction.csv files are scored "
                   "(regular files only). Paths named in the logs are never opened: logs may come from anyone.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page. Default: LOGS_DIR/report.html.")
@click.option("--run", "run_id", metavar="RUN_ID",
              help="The run to show when LOGS_DIR holds several (each has run_summary-<RUN_ID>.json). "
                   "Default: the latest (run_summary.json).")
def report_command(logs_dir: Path, gold_dir: Path | None, predictions_dir: Path | None, output: Path | None,
                   run_id: str | None) -> None:
    """Write one self-contained HTML page about a run whose logs are in LOGS_DIR.

    It reads the run's summary and its part of each trace only (a logs folder used by several runs
    keeps each run's summary; the latest is shown unless --run names another): a summary (counts,
    tokens, requests, wall time,
    model, settings), plots, a sortable and filterable table of tasks, and per task the question,
    the final SQL and solver.py, the self-check, and the timeline of attempts (collapsed). The page
    has no network reference (inline CSS/JS; readable without JavaScript), so it can be mailed
    around. A damaged or cut trace shows what it holds and the task is marked.
    """
    from datasolver.report import write_report  # loaded when used: a fast CLI start

    if predictions_dir is not None and gold_dir is None:
        raise click.UsageError("--predictions needs --gold (the predictions are only read to be scored)")
    path = write_report(logs_dir, gold_dir=gold_dir, predictions_dir=predictions_dir, output=output, run_id=run_id)
    click.echo(f"report: {path} ({path.stat().st_size / 1e6:.2f} MB)")


COMMANDS = [replay_command, report_command]
