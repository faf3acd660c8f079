"""`datasolver ask`, `ask-golden` and `mcp`: the text-answer analyst and the MCP server for people."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from datasolver.clip import clip
from datasolver.ask import NO_QUERY_NOTE, AskConfig, AskLimits, ask_data, load_golden, require_question, run_golden
from datasolver.cli.model_options import model_options, resolve_settings
from datasolver.errors import DatasolverError, error_shape

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_ANSWER_CHARS = 70  # per-item lines of ask-golden are cut here; the JSON keeps everything


def _config(review: bool, max_requests: int, query_timeout: float = AskLimits().query_timeout_s) -> AskConfig:
    return AskConfig(limits=AskLimits(max_requests=max_requests, query_timeout_s=query_timeout), review=review)


_model_options = [
    click.option("--review/--no-review", default=False, show_default=True,
                 help="Reviewer pass: a second model call checks plan and evidence and may send the analyst back once."),
    click.option("--max-requests", type=click.IntRange(min=2), default=AskLimits().max_requests, show_default=True,
                 help="Model requests per question (reviewer included)."),
    click.option("--symmetric", multiple=True, metavar="TYPE",
                 help="A knowledge-graph relation type that holds both ways (repeat; knowledge.md may declare more)."),
    click.option("--trace", "trace_path", type=click.Path(dir_okay=False, path_type=Path),
                 help="Append every model request, response and tool call to this JSONL file."),
]


def _with_model_options(func):
    for option in reversed(_model_options):
        func = option(func)
    return model_options(func)


@click.command("ask")
@click.argument("data_dir", type=_DIR)
@click.argument("question", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON record: answer, evidence SQL, handles used, token usage, steps, notes.")
@click.option("--timeout", "query_timeout", type=click.FloatRange(min=0, min_open=True),
              default=AskLimits().query_timeout_s, show_default=True, metavar="SECONDS",
              help="Stop any one query of the analyst after this long (the model is told and can try a cheaper one).")
@_with_model_options
def ask_command(data_dir: Path, question: str | None, as_json: bool, query_timeout: float, api_url: str | None,
                api_key: str | None, model: str | None, review: bool, max_requests: int, symmetric: tuple[str, ...],
                trace_path: Path | None) -> None:
    """Answer QUESTION in text from the tables of DATA_DIR (a task folder or any folder of CSV /
    JSON / SQLite / documents). Without QUESTION a task folder's own question is asked.

    The model is configured by $MODEL_API_URL, $MODEL_API_KEY and $MODEL_NAME (or --api-url,
    --api-key, --model); temperature 0. Prints the answer alone; --json prints the whole record.
    """
    try:
        if question is not None:
            require_question(question)
        result = ask_data(data_dir, question, settings=resolve_settings(api_url, api_key, model), config=_config(review, max_requests, query_timeout),
                          trace_path=trace_path, symmetric=symmetric)
    except DatasolverError as exc:
        if not as_json:
            raise  # the CLI's one handler prints it
        click.echo(json.dumps(error_shape(exc), ensure_ascii=False))
        raise click.exceptions.Exit(1) from exc
    if as_json:
        click.echo(json.dumps(result.to_record(), ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(result.answer)
        if not result.backed_by_query:  # stdout stays the answer alone; the warning goes beside it
            click.echo(f"note: {NO_QUERY_NOTE}", err=True)


@click.command("ask-golden")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--data", "data_dir", type=_DIR, help="Data folder for items that name no data_dir.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every item's answer and score to this JSON file.")
@_with_model_options
def ask_golden_command(questions: Path, data_dir: Path | None, json_out: Path | None, api_url: str | None,
                       api_key: str | None, model: str | None, review: bool, max_requests: int, symmetric: tuple[str, ...],
                       trace_path: Path | None) -> None:
    """Answer every question of QUESTIONS (JSON Lines, JSON list or CSV with `question`,
    `answer`, optional `id`, `data_dir`) and score each answer against its reference with the
    Jaccard text scorer. Prints one line per item and the mean.

    Measure the reviewer by running once with --no-review and once with --review.
    """
    items = load_golden(questions, data_dir)
    report = asyncio.run(run_golden(items, settings=resolve_settings(api_url, api_key, model),
                                    config=_config(review, max_requests), symmetric=symmetric,
                                    trace_path=trace_path))
    if json_out:
        report.save(json_out)
    for r in report.results:
        shown = r.error or r.answer
        shown = clip(shown, _ANSWER_CHARS)
        flags = "".join((" (reused)" if r.reused else "", " (sent back)" if r.sent_back else ""))
        click.echo(f"{r.id}\t{r.score:.3f}\t{shown}{flags}")
    click.echo(f"Mean {report.mean:.4f} over {len(report.results)} questions "
               f"(review {'on' if report.review else 'off'}; {report.usage.get('requests', 0)} requests, "
               f"{report.usage.get('total_tokens', 0)} tokens)")
    if json_out:
        click.echo(f"Results written to {json_out}")


@click.command("mcp")
@click.argument("path", metavar="DATA_OR_TASK_DIR", type=_DIR)
@click.option("--http", "http_port", type=click.IntRange(1, 65535), metavar="PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to bind with --http. Anything but loopback needs --allow-remote.")
@click.option("--allow-remote", is_flag=True,
              help="Allow a non-loopback --host. Every request must then carry `Authorization: Bearer TOKEN` "
                   "and a Host (and Origin, from browsers) naming this machine or an --allowed-host.")
@click.option("--token", envvar="DATASOLVER_MCP_TOKEN", metavar="TOKEN",
              help="Bearer token for --http (env DATASOLVER_MCP_TOKEN). With --allow-remote and no token, one is "
                   "generated and printed on stderr. On loopback it is checked only when given.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="Another Host name (or address) clients may use to reach a remote server (repeat).")
@click.option("--query-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="Interrupt any one query after this long; the client gets a timeout error.")
@click.option("--allow-write", is_flag=True,
              help="Task folders: also offer edit_solver and run_solver (they change solver.py in a scratch copy).")
@click.option("--symmetric", multiple=True, metavar="TYPE", help="A relation type that holds both ways (repeat).")
def mcp_command(path: Path, http_port: int | None, host: str, allow_remote: bool, token: str | None,
                allowed_hosts: tuple[str, ...], query_timeout: float, allow_write: bool,
                symmetric: tuple[str, ...]) -> None:
    """Serve the engine's tools over MCP (stdio, or streamable HTTP with --http): list_tables,
    describe_table, query (results kept as @N handles), filter, group, sort, join, related,
    render. For a task folder (task.json + context/) also the solver tools on a scratch copy:
    explore_data and read_solver, plus edit_solver and run_solver with --allow-write.
    Read-only: the input folder is never written. No model is needed here. Ctrl-C or SIGTERM
    stops the server and removes its temporary folders.
    """
    from datasolver.mcp_http import plan_exposure
    from datasolver.mcp_server import build_server

    exposure = None
    if http_port is not None:
        # Checked before any work: a refused remote bind opens nothing.
        exposure, generated = plan_exposure(host, http_port, allow_remote=allow_remote, token=token,
                                            allowed_hosts=allowed_hosts)
        if generated:
            click.echo(f"bearer token (send `Authorization: Bearer <token>`): {exposure.token}", err=True)
    with build_server(path, allow_write=allow_write, symmetric=symmetric, query_timeout_s=query_timeout) as server:
        server.run(http_port, host, exposure)


COMMANDS = [ask_command, ask_golden_command, mcp_command]
