"""Running the agent on one prepared task against the scripted model, and scripted turns that edit
solver.py's query line.

The scripted model has two faces (`datasolver.llm.fake`): `ScriptedServer`, a real HTTP server, and
`ScriptedModel`, answered at the client's transport (no socket, thread or process). The transport
is the default (`face=ScriptedModel`); a test about HTTP itself (preflight, interop, headers, real
servers) passes `face=ScriptedServer`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from datasolver.agent import Deadline, Limits, solve_task
from datasolver.agent.solve import SolveOutcome, TaskRun
from datasolver.data import ScratchLayout, load_task
from datasolver.llm import NULL_TRACE, LLMClient, LLMSettings, TraceWriter
from datasolver.llm.fake import ScriptedModel, ScriptedServer, ToolCalls, tool_call
from datasolver.solver.scaffold import RESULT_LINE
from datasolver.solver.hashline import line_hash

Face = type[ScriptedModel]


def fake_client(fake: str | ScriptedModel, trace: TraceWriter = NULL_TRACE, **settings: Any) -> LLMClient:
    """A client for the scripted model with instant retries (no backoff waits): over HTTP when given
    ``ScriptedServer.base_url``, else wherever ``fake`` answers (``fake.connection()``)."""
    values: dict[str, Any] = {"max_retries": 2, "initial_backoff": 0.0, "max_backoff": 0.0,
                              "retry_after_cap": 0.0, "read_timeout": 30.0}
    values.update(settings)
    connection = {"base_url": fake} if isinstance(fake, str) else fake.connection()
    return LLMClient(LLMSettings(**connection, api_key="test-key", model="fake-model", **values), trace)


def task_run(task_scratch_dir: Path, client: LLMClient, output_dir: Path, limits: Limits = Limits(),
             **fields: Any) -> TaskRun:
    """The run the pipeline gathers, for a scratch folder a test prepared: its task, its checked layout."""
    layout = ScratchLayout.of(task_scratch_dir).require()
    return TaskRun(load_task(layout.root), layout, client, Path(output_dir), limits, **fields)


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
    task_scratch_dir: Path, script: Any = None, *, handler: Any = None, limits: Limits | None = None,
    deadline: Deadline = Deadline(), server_options: dict[str, Any] | None = None, face: Face = ScriptedModel,
    **settings: Any,
) -> tuple[SolveOutcome, ScriptedModel, list[dict[str, Any]]]:
    """solve_task on a prepared scratch dir against the scripted model playing ``script`` (or
    ``handler``), served by ``face``; returns (outcome, the model, trace events). Output and logs go
    beside the scratch root; the model must have seen only requests a strict server accepts."""
    base = Path(task_scratch_dir).parent.parent
    trace = TraceWriter(base / "logs", Path(task_scratch_dir).name)
    with face(script, handler, **(server_options or {})) as fake:
        async def go() -> SolveOutcome:
            async with fake_client(fake, trace, **settings) as client:
                return await solve_task(task_run(task_scratch_dir, client, base / "out",
                                                 limits if limits is not None else Limits(max_attempts=1),
                                                 deadline=deadline))

        outcome = asyncio.run(go())
    assert fake.errors == [], fake.errors
    return outcome, fake, trace.read()


def solve_at_transport(task_scratch_dir: Path, script: Any = None, **options: Any):
    """`solve_scripted` with the model answered at the client's transport."""
    return solve_scripted(task_scratch_dir, script, face=ScriptedModel, **options)


def solve(scratch: Path, script=None, limits: Limits = Limits(), *, handler=None, send_backs: int = 0,
          deadline: Deadline = Deadline(), face: Face = ScriptedModel):
    """Run solve_task against the scripted model; return (outcome, the model, trace events).

    Replies without a tool call end the attempt here (``send_backs=0``) unless a test asks."""
    return solve_scripted(scratch, script, handler=handler, face=face, deadline=deadline,
                          limits=dataclasses.replace(limits, send_backs=send_backs))
