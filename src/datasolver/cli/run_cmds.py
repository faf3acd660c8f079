"""`datasolver run` (the main job) and `datasolver demo` (it, on the bundled examples, with a
scripted model). Thin over datasolver.pipeline: parse flags, one library call, print."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import TypeVar

import click

from datasolver.cli.input_options import follow_outside_links
from datasolver.cli.model_options import model_options, resolve_settings, server_options
from datasolver.data.schema_formats import SCHEMA_FORMATS, SchemaFormat
from datasolver.eval import evaluate_dir
from datasolver.llm.constants import ENV_API_KEY, ENV_API_URL, ENV_MODEL, PREFLIGHT_WAIT_S
from datasolver.terminal import printable
from datasolver.pipeline import (
    DEFAULT_TASK_TIMEOUT_S,
    DEFAULT_WORKERS,
    RunConfig,
    RunSummary,
    VotePolicy,
    default_input_dir,
    default_logs_dir,
    default_output_dir,
    make_progress,
    run_batch_sync,
    run_demo,
)

T = TypeVar("T")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}
EXIT_ALL_FAILED = 3
"""`run` and `demo`: the run ran tasks and every one of them failed (no prediction written)."""


class Duration(click.ParamType):
    """Seconds, or a number with a unit: 90, 90s, 15m, 11.5h."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, (int, float)):
            seconds = float(value)
        else:
            match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", str(value).lower())
            if not match:
                self.fail(f"{value!r} is not a duration: use seconds (900) or a unit (15m, 11.5h)", param, ctx)
            seconds = float(match.group(1)) * _UNITS[match.group(2)]
        if seconds <= 0:
            self.fail(f"{value!r} must be more than 0 seconds", param, ctx)
        return seconds


@click.command("run")
@click.argument("input_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.argument("output_dir", required=False, type=click.Path(file_okay=False, path_type=Path))
@follow_outside_links
@click.option("--workers", type=click.IntRange(min=1), default=DEFAULT_WORKERS, show_default=True,
              envvar="DATASOLVER_WORKERS", help="Tasks solved at the same time [env DATASOLVER_WORKERS].")
@click.option("--task-timeout", type=Duration(), default=DEFAULT_TASK_TIMEOUT_S, show_default=True,
              envvar="DATASOLVER_TASK_TIMEOUT",
              help="Deadline per task (seconds, or 15m); then the fallback runs [env DATASOLVER_TASK_TIMEOUT].")
@click.option("--time-budget", type=Duration(), default=None, envvar="DATASOLVER_TIME_BUDGET",
              help="Time for the whole run (e.g. 11.5h). When it runs short, the remaining tasks get one "
                   "attempt; when it is spent, only the fallback run. Default: none [env DATASOLVER_TIME_BUDGET].")
@click.option("--tasks", "task_ids", metavar="ID,ID", help="Only these task ids (or folder names).")
@click.option("--force", is_flag=True, help="Redo tasks that already have a prediction (default: skip them).")
@click.option("--logs", "logs_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Traces (<logs>/<task_id>/trace.jsonl) and the run's summary (run_summary-<run id>.json; "
                   "run_summary.json is the latest run's). Default: $LOGS_DIR, else /logs if writable, else "
                   "OUTPUT_DIR-logs beside the output.")
@click.option("--scratch", "scratch_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Working copies of the tasks here (kept). Default: a temporary folder, cleaned per task.")
@click.option("--keep-scratch", is_flag=True, help="Keep the temporary scratch folder (for debugging).")
@model_options
@server_options
@click.option("--preflight-wait", type=Duration(), default=PREFLIGHT_WAIT_S, show_default=True,
              envvar="DATASOLVER_PREFLIGHT_WAIT",
              help="Before the first task the model endpoint is checked (its model list and a one-token "
                   "request); a server that cannot be reached yet is waited for this long (it may be "
                   "starting), then the run stops with exit 1 [env DATASOLVER_PREFLIGHT_WAIT].")
@click.option("--doc-llm/--no-doc-llm", default=True, show_default=True,
              help="Let the model turn narrative documents into tables (deterministic tables always).")
@click.option("--direct-answer/--no-direct-answer", default=True, show_default=True,
              help="Start each task with one direct answer query (tools off) from the linked schema; publish it "
                   "when it passes the answer checks, else sample more queries and let execution choose, and "
                   "only then start the tool loop; an answer whose checks still fail is held back while "
                   "attempts and time remain.")
@click.option("--max-attempts", type=click.IntRange(min=1), help="Attempts per task (default: the agent's, 5).")
@click.option("--prompt-budget", type=click.IntRange(min=500), default=None,
              help="Estimated tokens for the first prompt; above it the tables least relevant to the question "
                   "are folded to one line each (still queryable). Default: 10000, sized for a 32k-context model.")
@click.option("--schema-format", type=click.Choice(SCHEMA_FORMATS), default="profile", show_default=True,
              help="How each table shown in full is written in the first prompt: profile (types, counts, "
                   "ranges, an example per column), create_table (a DuckDB CREATE TABLE statement with up to 3 "
                   "sample values per column as comments) or mschema (XiYan-SQL's M-Schema: column lists with "
                   "examples and the foreign keys the column names show). Folding and the budget are the same.")
@click.option("--tool-reply-tokens", type=click.IntRange(min=0), default=None,
              help="max_tokens of a reply while a tool call is expected (nothing submitted yet) from a model "
                   "that does not think; a reply cut there gets the usual room next. 0: no cap. Default: 512.")
@click.option("--task-token-budget", type=click.IntRange(min=1), default=None,
              help="End a task (with a reason) once its requests used this many tokens, prompt plus completion.")
@click.option("--attempt-temperature-step", type=click.FloatRange(min=0.0), default=None,
              help="From attempt 2 on, raise the temperature by this much per attempt (default 0.3, up to 1.0).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: asyncio in this process. ray: each task a Ray task on a cluster (needs "
                   "'datasolver[ray]' and folders shared by every node; see docs/scale.md).")
@click.option("--ray-address", metavar="ADDR", default=None,
              help="With --executor ray: the cluster to join (e.g. auto, or ray://head:10001). "
                   "Default: $RAY_ADDRESS, else a Ray started on this machine that listens on "
                   "loopback only. The model key reaches workers in their environment, never in "
                   "task arguments.")
@click.option("--ray-cpus", "ray_cpus", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="With --executor ray: CPUs each task reserves on the cluster.")
@click.option("--report", "with_report", is_flag=True,
              help="At the end, write the HTML run report to <logs>/report.html (see `datasolver report`).")
@click.option("--vision/--no-vision", default=False, envvar="MODEL_VISION", show_default=True,
              help="The endpoint reads images: send video keyframes as image parts [env MODEL_VISION=1].")
@click.option("--vision-images", type=click.IntRange(min=1), default=8, show_default=True,
              envvar="MODEL_VISION_IMAGES", help="At most this many keyframes per task as images [env MODEL_VISION_IMAGES].")
@click.option("--video-judges", type=click.IntRange(min=0), default=3, show_default=True,
              help="Independent model calls judging whether a task's video shows the answer (0: none).")
@click.option("--votes", type=click.IntRange(min=1), default=1, show_default=True,
              help="Independent solves per task: stop when two give the same answer (the metric's column "
                   "signature), else take the majority. The first solve runs at temperature 0.")
@click.option("--warm-runs/--cold-runs", default=True, show_default=True,
              help="Fork each sandboxed solver.py run from a per-batch fork server that has pandas, duckdb and "
                   "datasolver.data imported (same sandbox; falls back to cold runs when it is unusable), or "
                   "start a fresh interpreter for every run. Local executor only.")
@click.option("--vote-temperature", type=click.FloatRange(0.0, 2.0), default=0.7, show_default=True,
              help="Temperature of every solve after the first (with --votes > 1).")
def run_command(
    input_dir: Path | None, output_dir: Path | None, workers: int, task_timeout: float,
    time_budget: float | None, task_ids: str | None, force: bool, logs_dir: Path | None,
    scratch_dir: Path | None, keep_scratch: bool, api_url: str | None, api_key: str | None,
    model: str | None, tool_mode: str | None, context_window: int | None, max_tokens: int | None,
    preflight_wait: float, doc_llm: bool, direct_answer: bool, max_attempts: int | None, prompt_budget: int | None,
    schema_format: SchemaFormat, tool_reply_tokens: int | None, task_token_budget: int | None,
    attempt_temperature_step: float | None, executor: str, ray_address: str | None, ray_cpus: float,
    with_report: bool, vision: bool, vision_images: int, video_judges: int,
    votes: int, vote_temperature: float, warm_runs: bool,
) -> None:
    """Solve every task of INPUT_DIR into OUTPUT_DIR/<task_id>/prediction.csv.

    INPUT_DIR defaults to $INPUT_DIR, else /input; OUTPUT_DIR to $OUTPUT_DIR, else /output (so the
    competition container runs it with no arguments). Tasks that already have a prediction are
    skipped unless --force. A model must be configured, and its endpoint answer a check before the
    first task (reachable, key accepted, model known); a task's own failure never stops the run.
    Progress goes to stderr; each run's summary to the logs folder (run_summary-<run id>.json, and
    run_summary.json for the latest). With --votes N each task is solved up to N times
    independently and the answer voted.

    Exit status: 0 when the run ran and some task answered (or every task was skipped); 1 for a
    configuration, input or endpoint problem found before any task started; 3 when every task the
    run ran failed; 130/143 when interrupted.
    """
    settings = resolve_settings(api_url, api_key, model, tool_mode=tool_mode, context_window=context_window,
                                max_tokens=max_tokens)
    output = output_dir or default_output_dir()
    from datasolver.agent import STALL_ROUNDS, Limits

    agent = Limits()  # a flag left out keeps the agent's own default
    limits = Limits(
        max_attempts=_given(max_attempts, agent.max_attempts), prompt_budget=_given(prompt_budget, agent.prompt_budget),
        attempt_temperature_step=_given(attempt_temperature_step, agent.attempt_temperature_step),
        tool_reply_tokens=_given(tool_reply_tokens, agent.tool_reply_tokens) or None,  # 0: no cap
        task_token_budget=task_token_budget, vision=vision, vision_images=vision_images, video_judges=video_judges,
        direct_answer=direct_answer, hold_flagged=direct_answer, stall_rounds=STALL_ROUNDS if direct_answer else 0,
        schema_format=schema_format,
    )
    config = RunConfig(
        input_dir=input_dir or default_input_dir(), output_dir=output,
        logs_dir=logs_dir or default_logs_dir(output), settings=settings, workers=workers,
        task_timeout_s=task_timeout, time_budget_s=time_budget,
        task_ids=tuple(t.strip() for t in task_ids.split(",") if t.strip()) if task_ids else None,
        force=force, scratch_dir=scratch_dir, keep_scratch=keep_scratch, doc_llm=doc_llm, limits=limits,
        votes=VotePolicy(votes, vote_temperature), warm_runs=warm_runs, preflight_wait_s=preflight_wait,
    )
    runner = None
    if executor == "ray":
        from datasolver.pipeline.ray_executor import RayExecutor

        runner = RayExecutor(ray_address, cpus_per_task=ray_cpus)
    elif ray_address is not None:
        raise click.UsageError("--ray-address needs --executor ray")
    summary = run_batch_sync(config, progress=make_progress(), executor=runner)
    click.echo(_summary_line(summary))
    click.echo(f"predictions: {config.output_dir}  summary: {config.logs_dir / summary.file_name}")
    if with_report:
        from datasolver.report import write_report

        click.echo(f"report: {write_report(config.logs_dir, run_id=summary.run_id)}")
    _exit_for(summary)


def _given(flag: T | None, default: T) -> T:
    """A flag's value, or the default it stands for when left out."""
    return default if flag is None else flag


@click.command("demo")
@click.option("--output", "output_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where predictions go (default: a new temporary folder); logs go beside it.")
@click.option("--workers", type=click.IntRange(min=1), default=3, show_default=True, help="Tasks at the same time.")
@click.option("--input", "input_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Your own task folders (task_*/task.json and context/, as `datasolver run` reads them) instead "
                   "of the bundled examples; needs --answers.")
@click.option("--answers", "answers_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='With --input: the SQL the scripted model writes for each task id, as JSON: '
                   '{"task_id": "SELECT …"}, or {"task_id": {"sql": "SELECT …", "explore": ["\\\\tables"]}} like the '
                   "bundled examples' solutions.json. Tasks it has no answer for are not run.")
@click.option("--gold", "gold_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --input: gold answers (<task_id>/gold.csv) to score the predictions with the official "
                   "metric. Default: not scored.")
def demo_command(output_dir: Path | None, workers: int, input_dir: Path | None, answers_file: Path | None,
                 gold_dir: Path | None) -> None:
    """Run the main job on the bundled example tasks with a SCRIPTED model, then score it.

    The HTTP client, agent loop, tools, sandbox and summary are the real ones; the answers come
    from a local OpenAI-compatible server that replays prepared tool calls. No model is needed.
    With --input DIR --answers FILE the same runs on your own tasks: for each task the script
    explores, writes the SQL FILE gives into solver.py and runs it, so you see the pipeline, its
    traces and report on your data before any model is set up. Exit 3 when every task failed.
    """
    if (input_dir is None) != (answers_file is None):
        raise click.UsageError("--input and --answers go together: your task folders and the SQL the scripted "
                               "model writes for each")
    if gold_dir is not None and input_dir is None:
        raise click.UsageError("--gold goes with --input (the bundled examples bring their own gold)")
    output = output_dir or Path(tempfile.mkdtemp(prefix="datasolver-demo-")) / "output"
    what = f"your tasks in {input_dir}" if input_dir is not None else "the bundled example tasks"
    source = (f"writes the SQL that\n{answers_file} gives for each task, so these answers come from that file"
              if answers_file is not None else "replays prepared tool calls,\nso these answers come from the script")
    click.echo(printable(f"datasolver demo: {what}, end to end through the real HTTP client,\n"
                         "agent loop and tools (explore_data, read_solver, edit_solver, run_solver).\n"
                         f"The model is a SCRIPT: a local OpenAI-compatible server {source}, not from a "
                         "language model.\n", keep_newlines=True))
    result = run_demo(output, workers=workers, progress=make_progress(), input_dir=input_dir,
                      answers_file=answers_file, gold_dir=gold_dir)
    if result.unanswered:
        click.echo(printable(f"not run (no answer in {answers_file}): {', '.join(result.unanswered)}"))
    records = {r.task_id: r for r in result.summary.tasks}
    if result.gold_dir is not None:
        report = evaluate_dir(result.output_dir, result.gold_dir, result.input_dir)
        for task in report.tasks:
            record = records.get(task.task_id)
            status = record.status if record else "missing"
            requests = record.requests if record else 0
            click.echo(printable(f"  {task.task_id:<22} {status:<9} {requests:>2} scripted requests   "
                                 f"score {task.score:.2f}"))
        bundled = " bundled with the examples" if input_dir is None else f" in {result.gold_dir}"
        click.echo(printable(f"mean score {report.mean:.2f} against the gold answers{bundled}"))
    else:
        for record in sorted(result.summary.tasks, key=lambda r: r.task_id):
            click.echo(printable(f"  {record.task_id:<22} {record.status:<9} {record.requests:>2} scripted requests"))
        click.echo("not scored: pass --gold DIR (<task_id>/gold.csv) to score the predictions")
    click.echo(_summary_line(result.summary))
    click.echo(f"predictions: {result.output_dir}\ntraces:      {result.logs_dir}/<task_id>/trace.jsonl\n"
               f"summary:     {result.logs_dir / result.summary.file_name}\n")
    click.echo("To solve tasks with a real model, point datasolver at any OpenAI-compatible endpoint:\n"
               f"  export {ENV_API_URL}=https://your-endpoint/v1 {ENV_MODEL}=your-model {ENV_API_KEY}=...\n"
               f"  datasolver run {result.input_dir} OUTPUT_DIR")
    _exit_for(result.summary)


def _exit_for(summary: RunSummary) -> None:
    """Exit EXIT_ALL_FAILED when every task the run ran failed (the summary says why, task by task)."""
    if summary.all_failed():
        click.echo(f"every task this run ran failed (exit {EXIT_ALL_FAILED}); the reasons are in the summary",
                   err=True)
        raise click.exceptions.Exit(EXIT_ALL_FAILED)


def _summary_line(summary: RunSummary) -> str:
    counts, usage = summary.counts(), summary.usage()
    return (f"solved {counts['solved']}, fallback {counts['fallback']}, failed {counts['failed']}, "
            f"skipped {counts['skipped']} in {summary.seconds:.1f}s; "
            f"{usage['requests']} requests, {usage['total_tokens']} tokens; "
            "confidence " + ", ".join(f"{label} {n}" for label, n in summary.confidence_counts().items()))


COMMANDS = [run_command, demo_command]
