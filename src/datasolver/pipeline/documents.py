"""Document tables for one prepared task, run in a worker thread (PDF parsing is CPU work).

The deterministic path always runs; with model settings the document room may also structure
narrative documents. That pass gets its own client inside the thread's event loop (an async
client is bound to the loop it runs on) but shares the task's Usage and trace.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

from datasolver.data import Task
from datasolver.documents import DocReport, PrepareOptions, prepare_documents, prepare_documents_async
from datasolver.llm import LLMClient, LLMSettings, RequestGate, TraceWriter, Usage
from datasolver.solver import write_scaffold

# The deterministic pass over a task's documents stops reading after this long (documents not
# read by then are skipped with the reason), so a hostile PDF cannot hold a batch's worker.
DOCUMENTS_BUDGET_S = 300.0


def prepare_task_documents(
    task_scratch_dir: Path,
    *,
    task: Task | None = None,
    settings: LLMSettings | None = None,
    trace: TraceWriter | None = None,
    usage: Usage | None = None,
    request_gate: RequestGate | None = None,
    budget_s: float = DOCUMENTS_BUDGET_S,
) -> DocReport:
    """Write `derived/` tables and return the report (the agent's brief reads the document-table
    hints itself). Blocking; the deterministic pass reads for at most `budget_s`.

    When tables were written, solver.py is re-scaffolded so its table list names them. `task` is
    the task's Task when the caller has it (its question guides the model pass; without it the
    scratch's task.json is read).
    """
    options = PrepareOptions(deadline=time.monotonic() + budget_s,
                             question=task.question if task is not None else None)
    if settings is None:
        report = prepare_documents(task_scratch_dir, options=options)
    else:
        report = asyncio.run(_with_model(task_scratch_dir, settings, trace, usage, request_gate, options))
    if report.tables:
        write_scaffold(task_scratch_dir, task=task)
    return report


async def _with_model(
    task_scratch_dir: Path, settings: LLMSettings, trace: TraceWriter | None, usage: Usage | None,
    request_gate: RequestGate | None, options: PrepareOptions,
) -> DocReport:
    async with LLMClient(settings, trace, usage, request_gate=request_gate) as client:
        return await prepare_documents_async(task_scratch_dir, options=replace(options, llm=client))
