"""ToolRunner on a stand-in toolbox: timeouts, crashes, run_solver's timeout cap, clipping."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from pydantic import BaseModel

from datasolver.agent import Limits
from datasolver.agent.tool_runner import ToolRunner
from datasolver.llm import ToolCall, TraceWriter
from datasolver.solver.tools import ExploreDataArgs, RunSolverArgs, ToolResult


class StandInToolbox:
    """The slice of SolverToolbox the runner uses, with scripted behaviour per tool."""

    names = ["explore_data", "run_solver"]

    def __init__(self, behaviour) -> None:
        self.behaviour = behaviour
        self.calls: list[tuple[str, BaseModel]] = []

    def args_model(self, name: str) -> type[BaseModel]:
        return {"explore_data": ExploreDataArgs, "run_solver": RunSolverArgs}[name]

    def call(self, name: str, args: BaseModel) -> ToolResult:
        self.calls.append((name, args))
        return self.behaviour(name, args)


def run(behaviour, call: ToolCall, limits: Limits = Limits(), trace=None, interrupt=None, timing=None):
    toolbox = StandInToolbox(behaviour)

    async def go():
        started = time.monotonic()
        outcome = await ToolRunner(toolbox, limits, trace, interrupt).run(call)
        if timing is not None:
            timing.append(time.monotonic() - started)  # asyncio.run itself waits for the thread
        return outcome

    return asyncio.run(go()), toolbox


def explore(query: str = "SELECT 1") -> ToolCall:
    return ToolCall("c1", "explore_data", json.dumps({"query": query}))


def test_a_slow_tool_times_out_and_the_query_is_interrupted() -> None:
    interrupted, timing = [], []
    outcome, _ = run(lambda n, a: (time.sleep(1.5), ToolResult("late"))[1], explore(),
                     Limits(tool_timeout_s=1), interrupt=lambda: interrupted.append(True), timing=timing)
    assert 1.0 <= timing[0] < 1.4
    assert (outcome.kind, outcome.ok) == ("timeout", False)
    assert outcome.text.startswith("Error: explore_data did not finish within 1 s")
    assert interrupted == [True]


def test_a_crashing_tool_is_reported_to_the_model_and_traced(tmp_path: Path) -> None:
    def crash(name, args):
        raise RuntimeError("boom")

    trace = TraceWriter(tmp_path / "trace.jsonl")
    outcome, _ = run(crash, explore(), trace=trace)
    assert outcome.kind == "crash"
    assert outcome.text.startswith("Error: explore_data failed unexpectedly (RuntimeError: boom)")
    [event] = [e for e in trace.read() if e["event"] == "tool_crash"]
    assert "RuntimeError: boom" in event["traceback"]
    assert [e["event"] for e in trace.read()] == ["tool_call", "tool_crash", "tool_result"]


def test_run_solver_timeout_is_capped_by_the_tool_timeout() -> None:
    call = ToolCall("c2", "run_solver", json.dumps({"timeout": 600}))
    outcome, toolbox = run(lambda n, a: ToolResult("OK"), call, Limits(tool_timeout_s=90))
    assert outcome.ok and toolbox.calls[0][1].timeout == 90


def test_long_results_are_clipped() -> None:
    outcome, _ = run(lambda n, a: ToolResult("x" * 500), explore(), Limits(tool_result_chars=100))
    assert outcome.text == "x" * 100 + "\n… (400 more characters cut; ask for fewer rows or columns)"
    assert outcome.message() == {"role": "tool", "tool_call_id": "c1", "content": outcome.text}


def test_failed_and_retry_kinds_pass_through() -> None:
    outcome, _ = run(lambda n, a: ToolResult.failed("QueryError: no table"), explore())
    assert (outcome.kind, outcome.ok) == ("failed", False)
    outcome, toolbox = run(lambda n, a: ToolResult("never"), ToolCall("c3", "explore_data", '{"limit": 5}'))
    assert outcome.kind == "bad_arguments" and "missing required field 'query'" in outcome.text
    assert toolbox.calls == []
