"""`datasolver ask` and `ask-golden`: the text-answer analyst for people."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from datasolver.clip import clip
from datasolver.data import TableCache
from datasolver.ask.service import ASK_PREFLIGHT_WAIT_S
from datasolver.ask import AskConfig, AskLimits, ask_data, load_golden, require_question, run_golden
from datasolver.cli.input_options import encoding_option, follow_outside_links, table_cache_option
from datasolver.cli.output import shown
from datasolver.cli.model_options import model_options, resolve_settings
from datasolver.errors import DatasolverError, error_shape
from datasolver.terminal import printable

_DIR = click.Path(exists=True, file_okay=False, path_type=Path)
_ANSWER_CHARS = 70  # per-item lines of ask-golden are cut here; the JSON keeps everything


def _config(review: bool, max_requests: int, direct_answer: bool,
            query_timeout: float = AskLimits().query_timeout_s) -> AskConfig:
    return AskConfig(limits=AskLimits(max_requests=max_requests, query_timeout_s=query_timeout), review=review,
                     direct_answer=direct_answer)


_model_options = [
    click.option("--review/--no-review", default=False, show_default=True,
                 help="Reviewer pass: a second model call checks plan and evidence and may send the analyst back once."),
    click.option("--direct-answer/--no-direct-answer", default=True, show_default=True,
                 help="Start with one request, tools off, for one query from the tables the question names; the "
                      "program writes the answer from its rows. The tool loop starts only when it fails."),
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
@follow_outside_links
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON record: answer, evidence SQL, handles used, token usage, steps, notes.")
@click.option("--timeout", "query_timeout", type=click.FloatRange(min=0, min_open=True),
              default=AskLimits().query_timeout_s, show_default=True, metavar="SECONDS",
              help="Stop any one query of the analyst after this long (the model is told and can try a cheaper one).")
@click.option("--preflight-wait", type=click.FloatRange(min=0, min_open=True), default=ASK_PREFLIGHT_WAIT_S,
              show_default=True, metavar="SECONDS", envvar="DATASOLVER_PREFLIGHT_WAIT",
              help="While the tables load, the model endpoint is checked (its model list and a one-token request); "
                   "a server that cannot be reached is waited for this long, said at once on stderr, then the "
                   "command exits 1 naming the URL. Give more for a server that is starting "
                   "[env DATASOLVER_PREFLIGHT_WAIT].")
@encoding_option
@table_cache_option
@_with_model_options
def ask_command(data_dir: Path, question: str | None, as_json: bool, query_timeout: float, preflight_wait: float,
                encoding: str | None, table_cache: str | None, api_url: str | None, api_key: str | None,
                model: str | None, review: bool, direct_answer: bool, max_requests: int, symmetric: tuple[str, ...],
                trace_path: Path | None) -> None:
    """Answer QUESTION in text from the tables of DATA_DIR (a task folder or any folder of CSV /
    JSON / SQLite / documents). Without QUESTION a task folder's own question is asked.

    The model is configured by $MODEL_API_URL, $MODEL_API_KEY and $MODEL_NAME (or --api-url,
    --api-key, --model); temperature 0. Prints the answer alone; --json prints the whole record.
    """
    try:
        if question is not None:
            require_question(question)
        result = ask_data(data_dir, question, settings=resolve_settings(api_url, api_key, model),
                          config=_config(review, max_requests, direct_answer, query_timeout), trace_path=trace_path,
                          symmetric=symmetric, encoding=encoding, table_cache=TableCache.from_setting(table_cache),
                          preflight_wait_s=preflight_wait,
                          on_wait=lambda text: click.echo(f"note: {printable(text)}", err=True))
    except DatasolverError as exc:
        if not as_json:
            raise  # the CLI's one handler prints it
        click.echo(json.dumps(error_shape(exc), ensure_ascii=False))
        raise click.exceptions.Exit(1) from exc
    if as_json:
        click.echo(json.dumps(result.to_record(), ensure_ascii=False, indent=2, default=str))
    else:
        click.echo(shown(result.answer))  # an unbacked answer starts with its mark (UNBACKED_MARK)
        for note in (result.no_answer, result.unbacked):  # stdout stays the answer alone; warnings beside it
            if note:
                click.echo(f"note: {shown(note)}", err=True)
        if result.confidence is not None:
            click.echo(f"confidence: {result.confidence} ({result.confidence_reason})", err=True)


@click.command("ask-golden")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--data", "data_dir", type=_DIR, help="Data folder for items that name no data_dir.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write every item's answer and score to this JSON file.")
@_with_model_options
def ask_golden_command(questions: Path, data_dir: Path | None, json_out: Path | None, api_url: str | None,
                       api_key: str | None, model: str | None, review: bool, direct_answer: bool, max_requests: int,
                       symmetric: tuple[str, ...], trace_path: Path | None) -> None:
    """Answer every question of QUESTIONS (JSON Lines, JSON list or CSV with `question`,
    `answer`, optional `id`, `data_dir`) and score each answer against its reference with the
    Jaccard text scorer. Prints one line per item and the mean.

    Measure the reviewer by running once with --no-review and once with --review.
    """
    items = load_golden(questions, data_dir)
    report = asyncio.run(run_golden(items, settings=resolve_settings(api_url, api_key, model),
                                    config=_config(review, max_requests, direct_answer), symmetric=symmetric,
                                    trace_path=trace_path))
    if json_out:
        report.save(json_out)
    for r in report.results:
        answer = clip(r.error or r.answer, _ANSWER_CHARS)
        flags = "".join((" (reused)" if r.reused else "", " (sent back)" if r.sent_back else ""))
        click.echo(f"{printable(r.id)}\t{r.score:.3f}\t{printable(answer)}{flags}")
    click.echo(f"Mean {report.mean:.4f} over {len(report.results)} questions "
               f"(review {'on' if report.review else 'off'}; {report.usage.get('requests', 0)} requests, "
               f"{report.usage.get('total_tokens', 0)} tokens)")
    if json_out:
        click.echo(f"Results written to {json_out}")


COMMANDS = [ask_command, ask_golden_command]
