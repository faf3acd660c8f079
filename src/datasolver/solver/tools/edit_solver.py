"""edit_solver: replace, insert or delete lines of workdir/solver.py, addressed by number and hash."""

from __future__ import annotations

import re
import warnings

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from datasolver.clip import clip
from datasolver.solver.hashline import join_lines, line_hash, normalize_newlines, render_lines
from datasolver.solver.scaffold import (
    QUERY_AREA_END,
    QUERY_AREA_START,
    SAVE_BLOCK_START,
    query_code,
    replace_query_area,
)
from datasolver.solver.tools.base import ToolContext
from datasolver.solver.tools.solver_file import MISSING_SOLVER, read_lines, write_lines
from datasolver.toolkit import ToolResult

WINDOW = 3  # lines of context shown around an edit or a syntax error
LINE_CHARS = 120  # a quoted line in a message


def _normalize_hash(value: str | None) -> str | None:
    # Tolerate a pasted "12:KQ|…" prefix or lower case; the tool still checks the value.
    if value is None:
        return None
    match = re.match(r"^\s*(?:\d+\s*:)?\s*([A-Za-z]{2})\s*(?:\|.*)?$", value, re.S)
    return match.group(1).upper() if match else value.strip()


Hash = Annotated[str, AfterValidator(_normalize_hash)]
LineNumber = Annotated[int, Field(ge=1)]


def edit_solver(
    ctx: ToolContext,
    sql: str | None = None,
    start_line: LineNumber | None = None,
    start_hash: Hash | None = None,
    new_content: str | None = None,
    end_line: LineNumber | None = None,
    end_hash: Hash | None = None,
    insert_after: bool = False,
) -> ToolResult:
    """Edit workdir/solver.py: give `sql` alone to make it the query area's one query, or replace lines start_line..end_line with new_content, or insert after start_line.

    Lines are addressed by the number and two-letter hash shown by read_solver. The edit is
    rejected, with the file unchanged, when a hash does not match the current line or when the
    edited file would not be valid Python. On success you get a fresh numbered window around the
    edit; use those hashes for the next edit.

    Args:
        sql: One SQL query that answers the question; it replaces all code in the query area. Leave the line fields out.
        start_line: First line to replace, or the line to insert after.
        start_hash: The two-letter hash of start_line, as shown by read_solver.
        new_content: The new lines (any number, joined by newlines, with their indentation). An empty string deletes the lines.
        end_line: Last line to replace (inclusive); defaults to start_line.
        end_hash: The two-letter hash of end_line; required when end_line is given.
        insert_after: Insert new_content after start_line instead of replacing lines.
    """
    lines = read_lines(ctx.layout)
    if lines is None:
        return ToolResult.failed(MISSING_SOLVER)
    if _sql_wins(sql, new_content):
        # A small model sends the line fields beside `sql` (copied from the schema); the query is
        # what it means, so `sql` wins and the answer says the rest was not used.
        ignored = [name for name, value in (("start_line", start_line), ("start_hash", start_hash),
                                            ("new_content", new_content), ("end_line", end_line)) if value is not None]
        result = _replace_query(ctx, lines, _unwrapped(sql))
        if ignored and result.ok:
            return ToolResult(f"{result.text}\n(`sql` was used; {', '.join(ignored)} ignored: give `sql` alone.)")
        return result
    if start_line is None or start_hash is None or new_content is None:
        return ToolResult.retry(
            "Nothing to edit: give `sql` (one SQL query that answers the question), or start_line, start_hash "
            "and new_content (line numbers and hashes as read_solver shows them). solver.py is unchanged.")
    problem = _check_address(lines, start_line, start_hash, "start") or (
        _check_end(lines, start_line, end_line, end_hash, insert_after)
    )
    if problem:
        return ToolResult.retry(problem + "\nsolver.py is unchanged.")

    new = _content_lines(new_content)
    if insert_after:
        if not new:
            return ToolResult.retry("new_content is empty: there is nothing to insert. solver.py is unchanged.")
        first = start_line + 1  # the inserted block starts after start_line
        proposed = lines[:start_line] + new + lines[start_line:]
        summary = f"Inserted {_n(len(new))} after line {start_line}"
    else:
        last = end_line or start_line
        first = start_line
        proposed = lines[: start_line - 1] + new + lines[last:]
        span = f"line {start_line}" if last == start_line else f"lines {start_line}-{last}"
        summary = f"Deleted {span}" if not new else f"Replaced {span} with {_n(len(new))}"

    if not proposed:
        return ToolResult.retry("The edit would leave solver.py empty. solver.py is unchanged.")
    syntax = _syntax_problem(proposed)
    if syntax:
        return ToolResult.retry(syntax)

    write_lines(ctx.layout, proposed)
    text = f"{summary}; solver.py now has {len(proposed)} lines."
    if SAVE_BLOCK_START in lines and SAVE_BLOCK_START not in proposed:
        text += "\nwarning: the fixed save block marker is gone; prediction.csv is written only by that block."
    shown_from = first - WINDOW
    shown_to = (first + len(new) - 1 if new else first - 1) + WINDOW
    return ToolResult(text + "\n" + render_lines(proposed, shown_from, shown_to))


# `result = run_sql("…")` sent as `sql`: the query is the string inside.
_RUN_SQL_LINE = re.compile(r"""^\s*(?:result\s*=\s*)?run_sql\(\s*[rR]?("{3}|'{3}|"|')(.*)\1\s*\)\s*$""", re.DOTALL)


def _unwrapped(sql: str) -> str:
    match = _RUN_SQL_LINE.match(sql)
    return match.group(2) if match else sql


def _replace_query(ctx: ToolContext, lines: list[str], sql: str) -> ToolResult:
    """The query area's code becomes one run_sql call of ``sql``."""
    if not sql.strip():
        return ToolResult.retry("sql is empty: send the SQL query that answers the question. solver.py is unchanged.")
    proposed = replace_query_area(lines, query_code(sql))
    if proposed is None:
        return ToolResult.retry("The query area's marker lines are gone, so `sql` cannot find where to go: "
                                "edit by line with start_line, start_hash and new_content (read_solver first). "
                                "solver.py is unchanged.")
    syntax = _syntax_problem(proposed)
    if syntax:
        return ToolResult.retry(syntax)
    write_lines(ctx.layout, proposed)
    first = proposed.index(QUERY_AREA_START) + 1
    last = proposed.index(QUERY_AREA_END) + 1
    return ToolResult(f"Query area replaced with your SQL; solver.py now has {len(proposed)} lines. "
                      f"Call run_solver to run it.\n" + render_lines(proposed, first, last))


def _check_address(lines: list[str], number: int, given: str | None, which: str) -> str | None:
    if number > len(lines):
        return f"{which}_line {number} does not exist: solver.py has {len(lines)} lines."
    current = line_hash(lines[number - 1])
    if given != current:
        return (
            f"{which}_hash {given!r} does not match line {number}: its current hash is {current!r} "
            f"(content: {clip(lines[number - 1], LINE_CHARS)!r}). If that is the line you mean, resend with "
            f"{which}_hash=\"{current}\"."
        )
    return None


def _check_end(lines: list[str], start: int, end: int | None, end_hash: str | None, insert_after: bool) -> str | None:
    if insert_after:
        if end is not None or end_hash is not None:
            return "insert_after inserts after start_line: leave end_line and end_hash out."
        return None
    if end is None:
        return "end_hash was given without end_line." if end_hash is not None else None
    if end < start:
        return f"end_line {end} is before start_line {start}."
    if end == start and end_hash is None:
        return None
    if end_hash is None:
        return f"end_hash is required with end_line (the hash of line {end} as shown by read_solver)."
    return _check_address(lines, end, end_hash, "end")


def _content_lines(new_content: str) -> list[str]:
    if new_content == "":
        return []
    text = normalize_newlines(new_content)
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def _syntax_problem(proposed: list[str]) -> str | None:
    """The rejection message when `proposed` is not valid Python, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "\d" in SQL strings is only a warning
            compile(join_lines(proposed), "solver.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        number = exc.lineno or 1
        window = "\n".join(
            f"{'>>' if n == number else '  '} {n}| {proposed[n - 1]}"
            for n in range(max(1, number - WINDOW), min(len(proposed), number + WINDOW) + 1)
        )
        return (
            f"Rejected: the edited file would not parse, so solver.py is unchanged.\n"
            f"{type(exc).__name__}: {exc.msg} (line {number} of the edited file)\n{window}"
        )
    except ValueError as exc:  # e.g. a NUL character
        return f"Rejected: the edited file would not compile ({exc}), so solver.py is unchanged."
    return None


def _sql_wins(sql: object, new_content: object) -> bool:
    """Whether an edit means its `sql`: given and not blank, or given without new_content."""
    return isinstance(sql, str) and (bool(sql.strip()) or new_content is None)


def _n(count: int) -> str:
    return f"{count} line" + ("" if count == 1 else "s")


def edit_brief(args: dict[str, Any]) -> str:
    """An edit in a summary of older turns: where it went, not its code (the current solver.py is shown)."""
    if _sql_wins(args.get("sql"), args.get("new_content")):
        return "(the query area's query)"
    return f"(lines {args.get('start_line')}–{args.get('end_line') or args.get('start_line')})"
