"""Helpers for tests and demos of the agent: a client for the scripted fake server, and scripted
turns that edit solver.py's query line. Shipped in the package like ``datasolver.solver.testing``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasolver.llm import LLMClient, LLMSettings, TraceWriter
from datasolver.llm.fake import ToolCalls, tool_call
from datasolver.solver import RESULT_LINE, ScratchLayout
from datasolver.solver.hashline import line_hash


def fake_client(base_url: str, trace: TraceWriter | None = None, **settings: Any) -> LLMClient:
    """A client for ``ScriptedServer.base_url`` with instant retries (no backoff waits)."""
    values: dict[str, Any] = {"max_retries": 2, "initial_backoff": 0.0, "max_backoff": 0.0,
                              "retry_after_cap": 0.0, "read_timeout": 30.0}
    values.update(settings)
    return LLMClient(LLMSettings(base_url=base_url, api_key="test-key", model="fake-model", **values), trace)


def query_line(task_scratch_dir: Path) -> tuple[int, str]:
    """(line number, hash) of the `result = None` line of the pristine scaffold."""
    lines = ScratchLayout.of(task_scratch_dir).pristine.read_text(encoding="utf-8").splitlines()
    number = lines.index(RESULT_LINE) + 1
    return number, line_hash(RESULT_LINE)


def edit_query_turn(task_scratch_dir: Path, code: str) -> ToolCalls:
    """A scripted turn: edit_solver replacing `result = None` (of the pristine scaffold) with ``code``."""
    number, digest = query_line(task_scratch_dir)
    return tool_call("edit_solver", {"start_line": number, "start_hash": digest, "new_content": code})
