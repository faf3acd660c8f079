"""Checks on solver.py's code: an answer typed in as literals, rounding the question did not ask for."""

from __future__ import annotations

import ast

from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding
from datasolver.solver.answer_checks.queries import text_cells_not_in_data
from datasolver.solver.scaffold import QUERY_AREA_END, QUERY_AREA_START

_FRAME_MAKERS = {"DataFrame", "Series", "dict", "list", "tuple"}


def literal_answer(ctx: AnswerContext) -> list[CheckFinding]:
    tree = _query_area_tree(ctx.code)
    if tree is None:
        return []
    uses_sql = any(_is_run_sql(node) for node in ast.walk(tree)) or bool(ctx.queries)
    line = _literal_result_line(tree)
    if line is None and uses_sql:
        return []
    where = f" (solver.py query area, line {line} of it)" if line is not None else ""
    message = (f"`result` is built from values written into the code{where}, not from run_sql(...)."
               if line is not None else "solver.py never calls run_sql(...): `result` does not come from the data.")
    missing, looked_up = text_cells_not_in_data(ctx)
    if missing:
        message += (f" {len(missing)} of {looked_up} text cells occur in no table: "
                    + ", ".join(repr(c) for c in missing[:5]) + ".")
    message += (" Values copied from a preview get truncated or invented. Put the final query in "
                "`result = run_sql(\"\"\"SELECT …\"\"\")`.")
    return [CheckFinding("literal_answer", message)]


def early_rounding(ctx: AnswerContext) -> list[CheckFinding]:
    if ctx.shape.rounding:
        return []
    found = []
    if ctx.parsed is not None:
        for expression, kept in ctx.parsed.rounding()[:3]:
            found.append(_rounding_finding(f"the SQL computes `{expression}`", kept))
    tree = _query_area_tree(ctx.code)
    if tree is not None:
        for node in ast.walk(tree):
            kept = _pandas_rounding(node)
            if kept is not None:
                found.append(_rounding_finding(f"solver.py calls `{ast.unparse(node)[:120]}`", kept))
    return found[:3]


def _rounding_finding(what: str, kept: int) -> CheckFinding:
    return CheckFinding("early_rounding", (
        f"{what}, which keeps {max(kept, 0)} decimal(s), and the question does not ask for rounding. The "
        "scorer rounds to 2 decimals itself, so rounding earlier turns a right value wrong: return the "
        "unrounded value."))


def _query_area_tree(code: str) -> ast.Module | None:
    start, end = code.find(QUERY_AREA_START), code.find(QUERY_AREA_END)
    area = code[start + len(QUERY_AREA_START):end] if 0 <= start < end else code
    try:
        return ast.parse(area)
    except SyntaxError:
        return None


def _is_run_sql(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "run_sql"


def _literal_result_line(tree: ast.Module) -> int | None:
    """Line of the last `result = <constants>` assignment, when the last assignment is one."""
    last = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "result" for t in node.targets):
            if last is None or node.lineno >= last.lineno:
                last = node
    if last is None or not _is_literal(last.value):
        return None
    return last.lineno


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return bool(node.elts) and all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.values) and all(_is_literal(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in _FRAME_MAKERS or not node.args:
            return False
        return _is_literal(node.args[0]) and all(_is_literal(k.value) or k.arg in ("columns", "index")
                                                 for k in node.keywords)
    return False


def _pandas_rounding(node: ast.AST) -> int | None:
    """`x.round(d)` / `round(x, d)` with d < 2: the decimals kept."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "round":
        digits = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "decimals"), None)
        return _small_digits(digits)
    if isinstance(func, ast.Name) and func.id == "round":
        return _small_digits(node.args[1] if len(node.args) > 1 else None)
    return None


def _small_digits(node: ast.AST | None) -> int | None:
    if node is None:
        return 0
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and node.value < 2:
        return node.value
    return None
