"""Running the agent on one prepared task against a scripted model server."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from datasolver.agent import Limits, SolveOutcome, solve_task
from datasolver.agent.testing import fake_client
from datasolver.llm import TraceWriter
from datasolver.llm.fake import ScriptedServer


def solve(scratch: Path, script=None, limits: Limits = Limits(), *, handler=None, send_backs: int = 0):
    """Run solve_task against a scripted server; return (outcome, server, trace events).

    Replies without a tool call end the attempt here (``send_backs=0``) unless a test asks."""
    limits = dataclasses.replace(limits, send_backs=send_backs)
    trace = TraceWriter(scratch.parent.parent / "logs", scratch.name)
    with ScriptedServer(script, handler) as server:
        async def go() -> SolveOutcome:
            async with fake_client(server.base_url, trace) as client:
                return await solve_task(scratch, client, scratch.parent.parent / "out", limits=limits)

        outcome = asyncio.run(go())
    assert server.errors == []
    return outcome, server, trace.read()
