"""`datasolver docs`: turn a task's documents into tables (the documents room for people)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from datasolver.cli.output import shown
from datasolver.data.layout import TaskFolder
from datasolver.documents import DocReport, PrepareOptions, prepare_documents_async
from datasolver.llm import LLMClient, LLMConfigError, LLMSettings


def _model_or_none(no_llm: bool) -> tuple[LLMSettings | None, str | None]:
    """Settings from MODEL_API_URL / MODEL_NAME, or None with the reason the model is not used."""
    if no_llm:
        return None, None
    try:
        return LLMSettings.from_env(), None
    except LLMConfigError as exc:
        return None, f"no model configured ({exc}); documents without tables stay text"


async def _run(path: Path, out: Path | None, settings: LLMSettings | None, question: str | None, votes: int) -> DocReport:
    llm = LLMClient(settings) if settings is not None else None
    try:
        return await prepare_documents_async(path, out, PrepareOptions(llm=llm, question=question, votes=votes))
    finally:
        if llm is not None:
            await llm.aclose()


@click.command("docs")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write tables here; needed when PATH is a plain data folder rather than a task scratch dir.")
@click.option("--no-llm", is_flag=True, help="Deterministic path only (Markdown/PDF tables); no model calls.")
@click.option("--question", help="Question for the document relevance votes (default: task.json's question).")
@click.option("--votes", default=5, show_default=True, type=click.IntRange(min=0),
              help="Parallel relevance votes per document list (0: structure every narrative document).")
def docs_command(path: Path, out_dir: Path | None, no_llm: bool, question: str | None, votes: int) -> None:
    """Extract tables from the documents of PATH into its derived/ folder (or --out).

    PATH is a task scratch dir (with context/; tables go to PATH/derived/) or, with --out, any
    folder of documents. Markdown and text pipe tables and PDF tables are always extracted;
    narrative documents are structured by the model set in MODEL_API_URL / MODEL_NAME unless
    --no-llm. Prints one line per table, then skipped documents with the reason.
    """
    if out_dir is None and not TaskFolder(path).context.is_dir():
        raise click.ClickException(f"{path} has no context/ folder; give --out DIR to extract a plain folder")
    settings, note = _model_or_none(no_llm)
    report = asyncio.run(_run(path, out_dir, settings, question, votes))
    if note:
        click.echo(shown(f"note: {note}"))
    width = max((len(t.name) for t in report.tables), default=0)
    for t in report.tables:
        click.echo(shown(f"{t.name:<{width}}  rows {t.rows:>6}  {t.method:<14}  {t.source} {t.location}"))
    for s in report.skipped:
        click.echo(shown(f"skipped: {s.source}: {s.reason}"))
    for w in report.warnings:
        click.echo(shown(f"warning: {w}"))
    click.echo(shown(f"{report.summary()} in {report.out_dir}"))


COMMANDS = [docs_command]
