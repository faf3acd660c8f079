"""The one tool kit: tools built from typed functions, one exception → kind table, and the runner
(timeouts, crashes, per-tool settings, clipping) on a stand-in toolbox with fractions of a second."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import Field

from datasolver.data import QueryError, UnknownTable
from datasolver.errors import ToolRetry
from datasolver.llm import ToolCall, TraceWriter
from datasolver.solver.tools import SOLVER_TOOLS
from datasolver.toolkit import CallHooks, Tool, Toolbox, ToolOutcome, ToolResult, ToolRunner, hinted
from datasolver.toolkit.tool import error_result

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


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
    assert error_result(UnknownTable("no table named 'x'")).kind == "retry"
    assert error_result(QueryError("Binder Error: …")).kind == "failed"
    assert error_result(ToolRetry("the condition is empty")).kind == "retry"
    for bug in (KeyError("bug"), ValueError("a bug of ours")):  # a ValueError is no longer the model's mistake
        def raises(name, limit, bug=bug):
            raise bug

        with pytest.raises(type(bug)):
            make(raises).call("lookup", {"name": "x"})


def test_a_value_error_of_our_own_code_is_an_internal_error_not_a_retry(tmp_path: Path) -> None:
    """Only the named retry error asks the model to fix its arguments: a ValueError our code raises
    inside a tool is recorded as an internal error (traceback in the trace) and the model is told
    the tool failed, not that its arguments were wrong."""

    def ours(name, limit):
        int("not a number")  # a bug of ours, deep inside the tool

    def theirs(name, limit):
        raise ToolRetry(f"no name {name!r}; names are lower case")

    trace = TraceWriter(tmp_path / "trace.jsonl")
    outcome = run(make(ours), call(), trace=trace)
    assert (outcome.kind, outcome.ok) == ("crash", False)
    assert outcome.text.startswith("Error: lookup failed unexpectedly (ValueError: invalid literal for int()")
    assert "invalid arguments" not in outcome.text and "retry" not in outcome.text
    [crash] = [e for e in trace.read() if e["event"] == "tool_crash"]
    assert crash["error_type"] == "ValueError" and "int(\"not a number\")" in crash["traceback"]
    with pytest.raises(ValueError):  # outside a loop's runner it raises, as any bug does
        make(ours).call("lookup", {"name": "x"})
    retried = run(make(theirs), call("Bob"))
    assert (retried.kind, retried.text) == ("retry", "ToolRetry: no name 'Bob'; names are lower case")


def test_toolbox_call_turns_errors_into_results_and_adds_the_tools_hint() -> None:
    def fail(name, limit):
        raise UnknownTable(f"no table named {name!r}.")

    box = Toolbox([Tool(hinted(lambda exc: " Try list_tables.")(lookup))], {"behaviour": fail})
    result = box.call("lookup", {"name": "x"})
    assert (result.kind, result.text) == ("retry", "UnknownTable: no table named 'x'. Try list_tables.")
    assert box.call("lookup", {"limit": 0}).kind == "retry"
    assert box.call("nothing", {}).kind == "retry"


def test_a_slow_tool_times_out_and_the_query_is_interrupted() -> None:
    interrupted, release = [], threading.Event()
    box = make(lambda n, l: (release.wait(5), ToolResult("late"))[1])
    box.interrupt = lambda: (interrupted.append(True), release.set())  # the toolbox stops what it runs
    try:
        outcome = run(box, call(), timeout_s=0.05)
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


def test_a_loops_hooks_run_around_each_call_and_annotate_its_outcome() -> None:
    """What a loop does around one tool's calls is its two callbacks (as llm's BeforeCallSync /
    AfterCallSync): before a call (what to warm up), after it (how a cut result reads on, what to
    change when the error repeats). The tool record only says whether a call runs the answer."""
    seen: list[tuple[str, str]] = []

    def after(tool, call, outcome):
        seen.append(("after", tool.name))
        outcome.clip_note, outcome.on_repeat = "read on with an offset", "look the name up first"

    hooks = CallHooks(before_call=lambda tool, call: seen.append(("before", call.name)), after_call=after)
    box = make(lambda n, l: ToolResult("x" * 500), submits=True)
    outcome = asyncio.run(ToolRunner(box, result_chars=100, hooks=hooks).run(call()))
    assert seen == [("before", "lookup"), ("after", "lookup")]
    assert outcome.submits and outcome.on_repeat == "look the name up first"
    assert outcome.text.endswith("cut; read on with an offset)")
    plain = run(make(lambda n, l: ToolResult("ok")), call())
    assert not plain.submits and plain.clip_note == "ask for fewer rows or columns" and plain.on_repeat == ""
    assert [t.name for t in SOLVER_TOOLS if t.submits] == ["run_solver"]
    assert {f.name for f in dataclasses.fields(Tool) if f.init} == {
        "function", "name", "description", "timeout_grace_s", "prepare", "submits"}  # no loop reaction


def test_the_solver_tools_hooks_start_the_fork_server_and_say_how_each_outcome_reads(monkeypatch) -> None:
    from datasolver.solver.tools import SOLVER_HOOKS, registry

    started: list[str] = []
    monkeypatch.setattr(registry, "prestart_fork_server", lambda: started.append("zygote"))
    tools = {t.name: t for t in SOLVER_TOOLS}
    SOLVER_HOOKS.before_call(tools["explore_data"], ToolCall("c", "explore_data", "{}"))
    assert started == ["zygote"]
    readings = {}
    for name, raw in (("explore_data", json.dumps({"query": "SELECT\n 1"})), ("read_solver", "{}"),
                      ("edit_solver", '{"sql": "SELECT 1"}'), ("run_solver", "{}")):
        outcome = ToolOutcome("c", name, "text", True, "ok", [], tool=tools[name])
        SOLVER_HOOKS.after_call(tools[name], ToolCall("c", name, raw), outcome)
        readings[name] = (outcome.brief, outcome.clip_note, bool(outcome.on_repeat))
    assert readings == {
        "explore_data": ("SELECT 1", "ask for fewer rows or columns", True),
        "read_solver": ("", "read on with read_solver's offset", True),  # "": left out of the findings
        "edit_solver": ("(the query area's query)", "ask for fewer rows or columns", True),
        "run_solver": (None, "ask for fewer rows or columns", True),
    }


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
