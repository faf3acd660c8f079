"""One call from a data folder and a question to an AskResult: the wiring in one place."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from pathlib import Path

from datasolver.ask.config import AskConfig
from datasolver.ask.loop import Analyst, AskResult
from datasolver.ask.package import open_package
from datasolver.ask.question import require_question
from datasolver.data import TableCache
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter

ASK_PREFLIGHT_WAIT_S = 1.0
"""How long `datasolver ask` waits for a model server it cannot reach (an interactive command:
`run`'s batch waits PREFLIGHT_WAIT_S for a server that may be starting)."""
ASK_PREFLIGHT_REPLY_S = 10.0
"""How long the check waits for its one-token reply before the question goes on without it."""


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
    preflight_wait_s: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> AskResult:
    """Open `data_dir`, answer `question` (a task folder's own question when None), close.

    Every table is loaded first, with no time limit (from the table cache when it holds them):
    the query timeout then covers the analyst's queries only, and the table list the analyst
    reads carries each table's load notes.

    With `preflight_wait_s`, the model endpoint is checked while the tables load
    (`llm.preflight.check_endpoint`, on a client of its own, so the trace and the usage are the
    question's): a server that cannot be reached is waited for that long (`on_wait` is told at
    once), then EndpointUnusable ends the question and its load. No check where the answers come
    in-process (`settings.transport`)."""
    if question is not None:
        require_question(question)  # cheap checks before any I/O
    settings = settings or LLMSettings.from_env()
    trace = TraceWriter(trace_path) if trace_path is not None else NULL_TRACE
    with open_package(data_dir, cache_dir=cache_dir, symmetric=symmetric, encoding=encoding,
                      table_cache=table_cache) as package:
        load = asyncio.ensure_future(asyncio.to_thread(package.catalog.load, None, 0))
        waited = [load]
        if preflight_wait_s is not None and settings.transport is None:
            waited.append(asyncio.ensure_future(_preflight(settings, preflight_wait_s, on_wait)))
        try:
            done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # the first failure: the endpoint's or the load's
            await asyncio.gather(*waited)
        except BaseException:  # Ctrl-C or a failure: the load in its thread stops too
            package.catalog.interrupt()
            for task in waited[1:]:
                task.cancel()
            await asyncio.gather(*waited, return_exceptions=True)
            raise
        package.catalog.timeout_s = (config or AskConfig()).limits.query_timeout_s
        text = question if question is not None else (package.task_question or "")
        async with LLMClient(settings, trace) as client:
            return await Analyst(package, client, config).ask(text)


async def _preflight(settings: LLMSettings, wait_s: float, on_wait: Callable[[str], None] | None) -> None:
    from datasolver.llm.preflight import check_endpoint

    async with LLMClient(settings) as client:
        await check_endpoint(client, wait_s=wait_s, reply_s=ASK_PREFLIGHT_REPLY_S, on_wait=on_wait)


def ask_data(data_dir: Path | str, question: str | None, **kwargs: object) -> AskResult:
    """Synchronous `ask_data_async` (scripts, the CLI)."""
    return asyncio.run(ask_data_async(data_dir, question, **kwargs))  # type: ignore[arg-type]
