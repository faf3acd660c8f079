"""The one tool kit: tools built from typed functions, one exception → kind table, and the runner
(timeouts, crashes, per-tool settings, clipping) on a stand-in toolbox with fractions of a second."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Annotated

from pydantic import Field

from datasolver.data import QueryError, UnknownTable
from datasolver.llm import ToolCall, TraceWriter
from datasolver.solver.tools import SOLVER_TOOLS
from datasolver.toolkit import Tool, Toolbox, ToolResult, ToolRunner, kind_of


def lookup(ctx: dict, name: str, limit: Annotated[int, Field(ge=1)] = 5, tags: list[str] = []) -> ToolResult:  # noqa: B006
    """Look a name up.

    Args:
        name: The name to look up.
        limit: How many at most.
        tags: Only these tags.
    """
    return ctx["behaviour"](name, limit)


def _grace_cap(args, timeout_s: float):
    return args.model_copy(update={"limit": min(args.limit, int(timeout_s * 10))})


def make(behaviour, **settings) -> Toolbox[dict]:
    return Toolbox([Tool(lookup, **settings)], {"behaviour": behaviour})


def call(name: str = "bob", **extra) -> ToolCall:
    return ToolCall("c1", "lookup", json.dumps({"name": name, **extra}))


def run(toolbox: Toolbox, tool_call: ToolCall, **runner):
    return asyncio.run(ToolRunner(toolbox, **runner).run(tool_call))


def test_a_tool_is_its_typed_function_and_docstring() -> None:
    tool = Tool(lookup)
    fn = tool.schema()["function"]
    assert (fn["name"], fn["description"]) == ("lookup", "Look a name up.")
    params = fn["parameters"]
    assert params["required"] == ["name"] and params["additionalProperties"] is False
    assert params["properties"]["limit"] == {"default": 5, "description": "How many at most.", "minimum": 1,
                                             "type": "integer"}
    assert params["properties"]["tags"]["default"] == []
    assert tool.validate({"name": "x"}).limit == 5


def test_a_schema_is_built_once_and_each_caller_gets_its_own_copy(monkeypatch) -> None:
    tool = Tool(lookup)
    built = []
    real = tool.args_model.model_json_schema
    monkeypatch.setattr(tool.args_model, "model_json_schema", lambda *a, **k: built.append(1) or real(*a, **k))
    first = tool.schema()
    first["function"]["parameters"]["properties"].clear()  # a caller changing its copy
    assert tool.schema()["function"]["parameters"]["properties"]["limit"]["default"] == 5
    assert len(built) == 1


def test_the_solver_tools_have_no_twin_argument_models() -> None:
    import datasolver.solver.tools as tools

    assert not [name for name in dir(tools) if name.endswith("Args")]
    assert [t.name for t in SOLVER_TOOLS] == ["explore_data", "read_solver", "edit_solver", "run_solver"]


def test_one_exception_to_kind_table() -> None:
    assert kind_of(UnknownTable("no table named 'x'")) == "retry"
    assert kind_of(QueryError("Binder Error: …")) == "failed"
    assert kind_of(ValueError("the condition is empty")) == "retry"
    assert kind_of(KeyError("bug")) is None


def test_toolbox_call_turns_errors_into_results_and_adds_the_tools_hint() -> None:
    def fail(name, limit):
        raise UnknownTable(f"no table named {name!r}.")

    box = make(fail, hint=lambda exc: " Try list_tables.")
    result = box.call("lookup", {"name": "x"})
    assert (result.kind, result.text) == ("retry", "UnknownTable: no table named 'x'. Try list_tables.")
    assert box.call("lookup", {"limit": 0}).kind == "retry"
    assert box.call("nothing", {}).kind == "retry"


def test_a_slow_tool_times_out_and_the_query_is_interrupted() -> None:
    interrupted, release = [], threading.Event()
    box = make(lambda n, l: (release.wait(5), ToolResult("late"))[1])
    try:
        outcome = run(box, call(), timeout_s=0.05, interrupt=lambda: (interrupted.append(True), release.set()))
    finally:
        release.set()
    assert (outcome.kind, outcome.ok) == ("timeout", False)
    assert outcome.text.startswith("Error: lookup did not finish within 0.05 s")
    assert interrupted == [True]


def test_a_tools_grace_extends_its_timeout_and_prepare_adjusts_its_arguments() -> None:
    seen = []
    box = make(lambda n, limit: (seen.append(limit), ToolResult("done"))[1], timeout_grace_s=5.0, prepare=_grace_cap)
    outcome = run(box, call(limit=50), timeout_s=0.3)
    assert outcome.ok and seen == [3]  # capped by prepare to 10 × the runner's timeout


def test_a_crashing_tool_is_reported_to_the_model_and_traced(tmp_path: Path) -> None:
    def crash(name, limit):
        raise RuntimeError("boom")

    trace = TraceWriter(tmp_path / "trace.jsonl")
    outcome = run(make(crash), call(), trace=trace)
    assert outcome.kind == "crash"
    assert outcome.text.startswith("Error: lookup failed unexpectedly (RuntimeError: boom)")
    [event] = [e for e in trace.read() if e["event"] == "tool_crash"]
    assert "RuntimeError: boom" in event["traceback"]
    assert [e["event"] for e in trace.read()] == ["tool_call", "tool_crash", "tool_result"]


def test_long_results_are_clipped() -> None:
    outcome = run(make(lambda n, l: ToolResult("x" * 500)), call(), result_chars=100)
    assert outcome.text == "x" * 100 + "\n… (400 more characters cut; ask for fewer rows or columns)"
    assert outcome.message() == {"role": "tool", "tool_call_id": "c1", "content": outcome.text}


def test_a_tools_hooks_reach_the_loop_through_the_runner_and_its_outcomes() -> None:
    """What a loop does for one tool sits on the tool: its clip hint, what to warm up, whether it
    runs the answer; the loop reads them from the outcome and the runner, never by the tool's name."""
    started: list[str] = []
    box = make(lambda n, l: ToolResult("x" * 500), clip_hint="read on with an offset", submits=True,
               warm_up=lambda: started.append("zygote"), repeat_hint="look the name up first")
    runner = ToolRunner(box, result_chars=100)
    runner.warm_up()
    outcome = asyncio.run(runner.run(call()))
    assert started == ["zygote"] and outcome.submits and outcome.clip_hint == "read on with an offset"
    assert outcome.repeat_hint == "look the name up first"
    assert outcome.text.endswith("cut; read on with an offset)")
    plain = run(make(lambda n, l: ToolResult("ok")), call())
    assert not plain.submits and plain.clip_hint == "ask for fewer rows or columns"
    names = {t.name: t for t in SOLVER_TOOLS}
    assert [n for n, t in names.items() if t.submits] == ["run_solver"]
    assert [n for n, t in names.items() if t.warm_up is not None] == ["run_solver"]


def test_kinds_pass_through_and_bad_arguments_never_reach_the_tool() -> None:
    outcome = run(make(lambda n, l: ToolResult.failed("QueryError: no table")), call())
    assert (outcome.kind, outcome.ok) == ("failed", False)
    reached = []
    outcome = run(make(lambda n, l: reached.append(n)), ToolCall("c3", "lookup", '{"limit": 5}'))
    assert outcome.kind == "bad_arguments" and "missing required field 'name'" in outcome.text
    assert reached == []
    outcome = run(make(lambda n, l: reached.append(n)), ToolCall("c4", "lokup", "{}"))
    assert outcome.kind == "unknown_tool" and "Did you mean 'lookup'?" in outcome.text


def test_run_solvers_own_settings_cap_its_timeout_and_give_the_sandbox_grace() -> None:
    run_solver = SOLVER_TOOLS[3]
    assert run_solver.name == "run_solver" and run_solver.timeout_grace_s == 30
    args = run_solver.validate({"timeout": 600})
    assert run_solver.prepare(args, 90).timeout == 90
    assert run_solver.prepare(run_solver.validate({"timeout": 60}), 90).timeout == 60
    assert run_solver.prepare(args, 2.5).timeout == 2.5  # fractions of a second, both ways
    assert run_solver.validate({"timeout": 0.25}).timeout == 0.25
