"""Document tables for one prepared task, run in a worker thread (PDF parsing is CPU work).

The deterministic path always runs; with model settings the document room may also structure
narrative documents. That pass gets its own client inside the thread's event loop (an async
client is bound to the loop it runs on) but shares the task's Usage and trace.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from datasolver.documents import DocReport, PrepareOptions, prepare_documents, prepare_documents_async
from datasolver.llm import LLMClient, LLMSettings, RequestGate, TraceWriter, Usage
from datasolver.solver import write_scaffold


def prepare_task_documents(
    task_scratch_dir: Path,
    *,
    settings: LLMSettings | None = None,
    trace: TraceWriter | None = None,
    usage: Usage | None = None,
    request_gate: RequestGate | None = None,
) -> DocReport:
    """Write `derived/` tables and return the report (the agent's brief reads the document-table
    hints itself). Blocking.

    When tables were written, solver.py is re-scaffolded so its table list names them.
    """
    if settings is None:
        report = prepare_documents(task_scratch_dir)
    else:
        report = asyncio.run(_with_model(task_scratch_dir, settings, trace, usage, request_gate))
    if report.tables:
        write_scaffold(task_scratch_dir)
    return report


async def _with_model(
    task_scratch_dir: Path, settings: LLMSettings, trace: TraceWriter | None, usage: Usage | None,
    request_gate: RequestGate | None,
) -> DocReport:
    async with LLMClient(settings, trace, usage, request_gate=request_gate) as client:
        return await prepare_documents_async(task_scratch_dir, options=PrepareOptions(llm=client))
