"""read_solver: show numbered, hashed lines of workdir/solver.py."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from datasolver.solver.hashline import render_lines
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.solver_file import MISSING_SOLVER, read_lines
from datasolver.toolkit import ToolResult

MAX_LIMIT = 2000


def read_solver(
    ctx: ToolContext, offset: Annotated[int, Field(ge=1)] = 1, limit: Annotated[int, Field(ge=1)] = 400,
) -> ToolResult:
    """Read workdir/solver.py, the program that answers the question.

    Each line is shown as `<line number>:<hash>|<content>`. The two-letter hash identifies the
    line's current content: pass the line number and hash to edit_solver to change that line.
    The query goes where the line `result = None` stands; loading and saving are already done.

    Args:
        offset: First line number to show (1-based).
        limit: How many lines to show at most.
    """
    lines = read_lines(ctx.layout)
    if lines is None:
        return ToolResult.failed(MISSING_SOLVER)
    if not lines:
        return ToolResult.failed("workdir/solver.py is empty.")
    if offset > len(lines):
        return ToolResult.retry(f"offset {offset} is past the end: solver.py has {len(lines)} lines.")
    stop = offset + min(limit, MAX_LIMIT) - 1
    text = render_lines(lines, offset, stop)
    if stop < len(lines):
        text += f"\n… {len(lines) - stop} more lines; read_solver(offset={stop + 1}) shows them."
    return ToolResult(text)
