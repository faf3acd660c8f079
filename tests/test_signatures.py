"""The run path's hand-offs stay narrow: a run's trace is an object, never None (`NULL_TRACE` keeps
nothing), so no caller branches on it; no function from `datasolver run` to prediction.csv takes
more than six parameters: typed objects travel (settings, limits, the task, its layout), not bags
of loose arguments; and none takes "a layout or a path": the scratch layout prepare made (and
checked) travels as it is, never rebuilt from a path on the way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import datasolver

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

PACKAGE = Path(datasolver.__file__).parent
MAX_PARAMETERS = 6
# `datasolver run` from the CLI through the pipeline, the agent and the solver to prediction.csv.
RUN_PATH = ("cli/run_cmds.py", "pipeline/", "agent/", "solver/")
# In those rooms, the entries of other commands (`datasolver replay`, `datasolver demo`): their
# parameters are those commands' flags.
OTHER_COMMANDS = ("pipeline/replay.py", "pipeline/demo.py")


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


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[str]:
    args = function.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    names += [f"*{args.vararg.arg}"] if args.vararg else []
    names += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return names[1:] if method and names[:1] in (["self"], ["cls"]) else names


def _exempt(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A click command (its parameters are its flags, one per option) or a model-facing tool (its
    parameters are the JSON schema the model fills: the first one is the `ToolContext`)."""
    decorators = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in function.decorator_list]
    if any(d.startswith("click.") or d.endswith(".command") for d in decorators):
        return True
    first = (function.args.posonlyargs + function.args.args)[:1]
    return bool(first) and first[0].annotation is not None and ast.unparse(first[0].annotation) == "ToolContext"


def wide_functions(source: str) -> list[tuple[int, str, int]]:
    """(line, qualified name, parameters) of each function taking more than MAX_PARAMETERS
    (self and cls not counted; click commands and tool functions exempt, see `_exempt`)."""
    found = []

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count = len(_parameters(child, in_class))
                if count > MAX_PARAMETERS and not _exempt(child):
                    found.append((child.lineno, prefix + child.name, count))
                visit(child, f"{prefix}{child.name}.", False)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", True)

    visit(ast.parse(source), "", False)
    return found


def _union_members(node: ast.AST) -> set[str]:
    """The names an annotation joins (`A | B`, `Union[A, B]`, `Optional[A]`, also written as a string)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return set()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) | _union_members(node.right)
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] in ("Union", "Optional"):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return set().union(*(_union_members(part) for part in parts))
    return {ast.unparse(node).split(".")[-1]}


def layout_or_path(source: str) -> list[tuple[int, str]]:
    """(line, what) of each parameter or field that takes a scratch layout or a path
    (`ScratchLayout | Path`, `Path | ScratchLayout | str`, `Union[ScratchLayout, os.PathLike]`, …)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            members = _union_members(node.annotation)
            if "ScratchLayout" in members and members & {"Path", "PurePath", "str", "PathLike"}:
                found.append((node.lineno, ast.unparse(node)))
    return found


def _run_path_modules() -> list[Path]:
    names = {path: path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))}
    return [path for path, name in names.items() if name.startswith(RUN_PATH) and name not in OTHER_COMMANDS]


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


def test_no_function_on_the_run_path_takes_more_than_six_parameters() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line} {name} ({count})" for path in _run_path_modules()
             for line, name, count in wide_functions(path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_function_on_the_run_path_takes_a_layout_or_a_path() -> None:
    """The layout is made and checked once (prepare) and handed down as it is; only other commands'
    entries (outside the run path) turn a folder's path into a layout, once."""
    found = [f"{path.relative_to(PACKAGE)}:{line} {what}" for path in _run_path_modules()
             for line, what in layout_or_path(path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_layout_check_finds_each_way_of_writing_a_layout_or_a_path() -> None:
    planted = '''
def a(task_scratch_dir: ScratchLayout | Path, out: Path): ...
def b(folder: "Path | ScratchLayout | str", layout: ScratchLayout): ...
def c(folder: Union[ScratchLayout, os.PathLike], other: Optional[ScratchLayout]): ...
def d(folder: data.ScratchLayout | pathlib.Path | None = None): ...
class E:
    root: ScratchLayout | str
    layout: ScratchLayout | None
'''
    assert sorted(line for line, _ in layout_or_path(planted)) == [2, 3, 4, 5, 7]


def test_the_run_path_is_where_the_run_goes() -> None:
    names = {path.relative_to(PACKAGE).as_posix() for path in _run_path_modules()}
    assert {"cli/run_cmds.py", "pipeline/batch.py", "pipeline/task.py", "agent/solve.py", "agent/loop.py",
            "solver/prepare.py", "solver/publish.py"} <= names
    assert not any(name.startswith(("ask/", "cli/ask_cmds", "data/", *OTHER_COMMANDS)) for name in names)


def test_the_parameter_check_counts_what_a_caller_passes() -> None:
    planted = '''
def narrow(a, b, c, d, e, f): ...
async def wide(a, b, c, d, e, f, *, g=1): ...
def starred(a, b, c, d, e, *args, **kwargs): ...
class C:
    def method(self, a, b, c, d, e, f): ...
    @classmethod
    def build(cls, a, b, c, d, e, f, g): ...
    def outer(self):
        def inner(self, a, b, c, d, e, f): ...
@click.command("x")
@click.option("--a")
def command(a, b, c, d, e, f, g): ...
@group.command("y")
def sub_command(a, b, c, d, e, f, g): ...
def tool(ctx: ToolContext, a, b, c, d, e, f): ...
'''
    assert wide_functions(planted) == [(3, "wide", 7), (4, "starred", 7), (8, "C.build", 7),
                                       (10, "C.outer.inner", 7)]
