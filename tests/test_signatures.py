"""The run path's hand-offs stay narrow: a run's trace is an object, never None (`NULL_TRACE` keeps
nothing), so no caller branches on it."""

from __future__ import annotations

import ast
from pathlib import Path

import datasolver

PACKAGE = Path(datasolver.__file__).parent


def _named_trace(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "trace" or name.endswith("_trace")


def _optional_annotation(node: ast.AST | None) -> bool:
    """`TraceWriter | None`, `None | TraceWriter`, `Optional[TraceWriter]` (also as a string)."""
    if node is None:
        return False
    text = ast.unparse(node).replace(" ", "").strip("'\"")
    return text in ("TraceWriter|None", "None|TraceWriter", "Optional[TraceWriter]")


def optional_traces(source: str) -> list[tuple[int, str]]:
    """(line, what) for each place a trace may be None: a `trace is (not) None` test, a truth test
    on a trace (`if trace:`, `trace and …`, `… if trace else …`), a `TraceWriter | None` annotation."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and _named_trace(node.left) and any(
                isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) and _named_trace(node.test):
            found.append((node.lineno, f"truth test on {ast.unparse(node.test)}"))
        elif isinstance(node, ast.BoolOp) and any(_named_trace(v) for v in node.values):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _named_trace(node.operand):
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and _optional_annotation(node.annotation):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_a_runs_trace_is_never_none() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line} {what}" for path in sorted(PACKAGE.rglob("*.py"))
             for line, what in optional_traces(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_trace_check_finds_each_way_of_branching_on_a_trace() -> None:
    planted = '''
def f(trace: TraceWriter | None = None, other: "Optional[TraceWriter]" = None):
    if trace is not None:
        trace.event("x")
    if self.trace:
        pass
    trace and trace.event("y")
    run_trace = trace if trace else NULL_TRACE
    note: None | TraceWriter = None
    if client.trace is None or not trace:
        pass
    if tracer is None and trace_id:  # other names
        pass
'''
    lines = sorted(line for line, _ in optional_traces(planted))
    assert lines == [2, 2, 3, 5, 7, 8, 9, 10, 10]
