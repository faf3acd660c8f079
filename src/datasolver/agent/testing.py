"""Helpers for tests and demos of the agent: a client for the scripted fake server, and scripted
turns that edit solver.py's query line. Shipped in the package like ``datasolver.solver.testing``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter
from datasolver.llm.fake import ToolCalls, tool_call
from datasolver.data import ScratchLayout
from datasolver.solver import RESULT_LINE
from datasolver.solver.hashline import line_hash


def fake_client(base_url: str, trace: TraceWriter = NULL_TRACE, **settings: Any) -> LLMClient:
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


def solve_scripted(
    task_scratch_dir: Path, script: Any = None, *, handler: Any = None, limits: Any = None,
    server_options: dict[str, Any] | None = None, **settings: Any,
) -> tuple[Any, Any, list[dict[str, Any]]]:
    """solve_task on a prepared scratch dir against a ScriptedServer playing ``script`` (or
    ``handler``); returns (outcome, server, trace events). Output and logs go beside the scratch
    root; the server must have seen only requests a strict server accepts."""
    import asyncio

    from datasolver.agent.limits import Limits
    from datasolver.agent.solve import solve_task
    from datasolver.llm.fake import ScriptedServer

    base = Path(task_scratch_dir).parent.parent
    trace = TraceWriter(base / "logs", Path(task_scratch_dir).name)
    with ScriptedServer(script, handler, **(server_options or {})) as server:
        async def go() -> Any:
            async with fake_client(server.base_url, trace, **settings) as client:
                return await solve_task(task_scratch_dir, client, base / "out",
                                        limits=limits if limits is not None else Limits(max_attempts=1))

        outcome = asyncio.run(go())
    assert server.errors == [], server.errors
    return outcome, server, trace.read()
