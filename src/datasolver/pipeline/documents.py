"""Document tables for one prepared task: one sync entry (`prepare_task_documents`: `datasolver
prepare`, tests) and one async entry (`prepare_task_documents_async`: the pipeline's event loop).

The deterministic path always runs (blocking: in a worker thread under the async entry); with
model settings the document room may also structure narrative documents; the async entry takes
the client itself (on the caller's loop, sharing the task's Usage, trace and request gate).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from datasolver.data import Task
from datasolver.data.layout import ScratchLayout
from datasolver.documents import DocReport, PrepareOptions, prepare_documents, prepare_documents_async
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter, Usage
from datasolver.solver import write_scaffold

# The deterministic pass over a task's documents stops reading after this long (documents not
# read by then are skipped with the reason), so a hostile PDF cannot hold a batch's worker.
DOCUMENTS_BUDGET_S = 300.0


def prepare_task_documents(
    layout: ScratchLayout,
    *,
    task: Task | None = None,
    settings: LLMSettings | None = None,
    trace: TraceWriter = NULL_TRACE,
    usage: Usage | None = None,
    budget_s: float = DOCUMENTS_BUDGET_S,
) -> DocReport:
    """Write `derived/` tables and return the report (the agent's brief reads the document-table
    hints itself). Blocking; the deterministic pass reads for at most `budget_s`. With `settings`
    it runs the async entry in an event loop of its own (not from inside a running loop).

    When tables were written, solver.py is re-scaffolded so its table list names them. `task` is
    the task's Task when the caller has it (its question guides the model pass; without it the
    scratch's task.json is read).
    """
    if settings is not None:
        async def with_model(settings: LLMSettings) -> DocReport:
            async with LLMClient(settings, trace, usage) as client:
                return await prepare_task_documents_async(layout, task=task, client=client, budget_s=budget_s)

        return asyncio.run(with_model(settings))
    report = prepare_documents(layout, options=_options(task, budget_s))
    if report.tables:
        write_scaffold(layout, task=task)
    return report


async def prepare_task_documents_async(
    layout: ScratchLayout,
    *,
    task: Task | None = None,
    client: LLMClient | None = None,
    budget_s: float = DOCUMENTS_BUDGET_S,
) -> DocReport:
    """`prepare_task_documents` for a caller on an event loop: the blocking steps in worker
    threads, the model's requests (when a `client` is given: the caller's, with its trace, usage
    and request gate) on this loop."""
    if client is None:
        return await asyncio.to_thread(prepare_task_documents, layout, task=task, budget_s=budget_s)
    report = await prepare_documents_async(layout, options=replace(_options(task, budget_s), llm=client))
    if report.tables:
        await asyncio.to_thread(write_scaffold, layout, task=task)
    return report


def _options(task: Task | None, budget_s: float) -> PrepareOptions:
    return PrepareOptions(deadline=time.monotonic() + budget_s, question=task.question if task is not None else None)
