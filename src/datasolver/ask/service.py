"""One call from a data folder and a question to an AskResult: the wiring in one place."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from datasolver.ask.config import AskConfig
from datasolver.ask.loop import Analyst, AskResult
from datasolver.ask.package import open_package
from datasolver.ask.question import require_question
from datasolver.data import TableCache
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter


async def ask_data_async(
    data_dir: Path | str,
    question: str | None,
    *,
    settings: LLMSettings | None = None,
    config: AskConfig | None = None,
    trace_path: Path | None = None,
    symmetric: Iterable[str] = (),
    cache_dir: Path | None = None,
    encoding: str | None = None,
    table_cache: TableCache | None = None,
) -> AskResult:
    """Open `data_dir`, answer `question` (a task folder's own question when None), close.

    Every table is loaded first, with no time limit (from the table cache when it holds them):
    the query timeout then covers the analyst's queries only, and the table list the analyst
    reads carries each table's load notes."""
    if question is not None:
        require_question(question)  # cheap checks before any I/O
    settings = settings or LLMSettings.from_env()
    trace = TraceWriter(trace_path) if trace_path is not None else NULL_TRACE
    with open_package(data_dir, cache_dir=cache_dir, symmetric=symmetric, encoding=encoding,
                      table_cache=table_cache) as package:
        try:
            await asyncio.to_thread(package.catalog.load, None, 0)
        except asyncio.CancelledError:  # Ctrl-C: the load in its thread stops too
            package.catalog.interrupt()
            raise
        package.catalog.timeout_s = (config or AskConfig()).limits.query_timeout_s
        text = question if question is not None else (package.task_question or "")
        async with LLMClient(settings, trace) as client:
            return await Analyst(package, client, config).ask(text)


def ask_data(data_dir: Path | str, question: str | None, **kwargs: object) -> AskResult:
    """Synchronous `ask_data_async` (scripts, the CLI)."""
    return asyncio.run(ask_data_async(data_dir, question, **kwargs))  # type: ignore[arg-type]
