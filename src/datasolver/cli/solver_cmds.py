"""`datasolver prepare`, `tool`, `solve` and `doctor`: the solver room for people and scripts."""

from __future__ import annotations

import json
from pathlib import Path

import click

from datasolver.cli.input_options import follow_outside_links
from datasolver.cli.output import shown
from datasolver.data import ScratchLayout, load_task
from datasolver.data.input_files import read_prepared_record
from datasolver.solver import SolverToolbox, prepare_scratch, render_run, rerun_solver
from datasolver.toolkit import unknown_tool

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


@click.command("prepare")
@click.argument("task_dir", type=_DIR)
@click.argument("scratch_dir", type=click.Path(file_okay=False, path_type=Path))
@follow_outside_links
@click.option("--copy", "copy_context", is_flag=True,
              help="Copy context files instead of linking them (self-contained, costs disk).")
@click.option("--no-llm", is_flag=True,
              help="Only the deterministic document tables, even when a model is configured.")
def prepare_command(task_dir: Path, scratch_dir: Path, copy_context: bool, no_llm: bool) -> None:
    """Create SCRATCH_DIR/<task_id>/ from TASK_DIR (task.json, context/, derived/ document
    tables, workdir/solver.py, tmp/) and print its path. The input is never written; preparing
    again starts the task over.

    Markdown and PDF tables in context/doc always become tables; narrative documents are also
    structured by the model when MODEL_API_URL and MODEL_NAME are set (skip with --no-llm).
    """
    # Here, not at the top: `tool`, `solve` and `doctor` start without the pipeline and the LLM SDK
    # (`datasolver tool … run_solver` ~1.2 CPU-s less; benchmarks/README.md, suite_cpu).
    from datasolver.llm import LLMConfigError, LLMSettings
    from datasolver.pipeline import prepare_task_documents

    settings = None
    if not no_llm:
        try:
            settings = LLMSettings.from_env()
        except LLMConfigError:
            settings = None  # no model configured: the deterministic path alone
    task = load_task(task_dir)  # read once: the Task travels to the scaffold and the documents
    layout = prepare_scratch(task, scratch_dir, link_context=not copy_context)
    for path, reason in read_prepared_record(layout.root) or []:
        click.echo(shown(f"note: {path}: {reason}"), err=True)
    report = prepare_task_documents(layout, task=task, settings=settings)
    if report.tables or report.skipped:
        click.echo(shown(report.summary()), err=True)
    click.echo(layout.root)


@click.command("tool")
@click.argument("task_scratch_dir", type=_DIR)
@click.argument("tool_name")
@click.argument("json_args", default="{}")
@click.option("--json", "as_json", is_flag=True, help='Print {"kind", "ok", "text"} as JSON instead of the text.')
def tool_command(task_scratch_dir: Path, tool_name: str, json_args: str, as_json: bool) -> None:
    """Call one solver tool (explore_data, read_solver, edit_solver, run_solver) on a prepared
    task exactly as the agent would, and print its answer. JSON_ARGS is a JSON object, e.g.
    '{"query": "\\\\tables"}'. A tool answer (even FAILED) exits 0; bad input exits 1.
    """
    try:
        args = json.loads(json_args)
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"JSON_ARGS is not valid JSON: {exc}") from exc
    if not isinstance(args, dict):
        raise click.ClickException("JSON_ARGS must be a JSON object, e.g. '{}'")
    with SolverToolbox(ScratchLayout.of(task_scratch_dir).require()) as toolbox:
        if tool_name not in toolbox.names:
            raise click.ClickException(unknown_tool(tool_name, toolbox.names))
        result = toolbox.call(tool_name, args)
    click.echo(json.dumps({"kind": result.kind, "ok": result.ok, "text": result.text}, ensure_ascii=False)
               if as_json else shown(result.text))


@click.command("solve")
@click.argument("task_scratch_dir", type=_DIR)
@click.option("--output", "output_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Copy prediction.csv to OUTPUT/<task_id>/prediction.csv.")
def solve_command(task_scratch_dir: Path, output_dir: Path | None) -> None:
    """Run the existing workdir/solver.py of a prepared task in the sandbox (no LLM) and print
    where prediction.csv is. Exits 1 when the run is FAILED or writes NO OUTPUT.
    """
    run, path = rerun_solver(ScratchLayout.of(task_scratch_dir).require(), output_dir)
    if path is None:
        raise click.ClickException(shown(render_run(run, show_rows=0)))
    click.echo(path)


@click.command("doctor")
def doctor_command() -> None:
    """Report which sandbox protections this machine gives a solver.py run: each kernel
    feature probed (Landlock reads/writes/TCP/scoping, namespaces, seccomp, PID cap) and one
    sandboxed no-op run. Exits 1 when writes are not confined (the sandbox's core guarantee).
    See docs/sandbox.md for what each protection stops.
    """
    from datasolver.sandbox.doctor import sandbox_report

    report = sandbox_report()
    width = max(len(p.name) for p in report)
    for p in report:
        click.echo(f"{'yes' if p.active else 'NO ':<3}  {p.name:<{width}}  {p.detail}")
    core = {p.name: p.active for p in report}
    if not core.get("sandbox starts") or not core.get("writes confined to the scratch folder"):
        raise click.exceptions.Exit(1)


COMMANDS = [prepare_command, tool_command, solve_command, doctor_command]
