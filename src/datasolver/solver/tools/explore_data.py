"""explore_data: list tables, show a table's schema, lint knowledge.md, find join keys, or run read-only SQL."""

from __future__ import annotations

import dataclasses
import shlex
from typing import Annotated, Any

from pydantic import Field

from datasolver.data import (
    QueryError,
    QueryResult,
    UnknownTable,
    join_candidates,
    lint_knowledge,
    render_joins,
    render_result,
)
from datasolver.data.empty_result import counts_zero, explain_empty
from datasolver.data.linking import link_question
from datasolver.errors import DatasolverError
from datasolver.solver.tools.base import ToolContext
from datasolver.toolkit import ToolResult, hinted

MAX_LIMIT = 500
SAMPLE_ROWS = 5
DIAGNOSIS_QUERY_S = 2.0  # each query of an empty result's diagnosis
DIAGNOSIS_BUDGET_S = 6.0  # the whole diagnosis: exploration stays quick, later filters are left out


def explore_hint(exc: DatasolverError) -> str:
    """What to do next, in this tool's own commands (the engine's messages name no tool)."""
    if isinstance(exc, UnknownTable):
        return " List tables with `\\tables`."
    if isinstance(exc, QueryError) and exc.unloaded:
        return " `\\tables` says why they could not be read."
    return ""


@hinted(explore_hint)
def explore_data(ctx: ToolContext, query: str, limit: Annotated[int, Field(ge=1)] = 50) -> ToolResult:
    """Explore this task's tables (read-only). Every CSV, JSON, SQLite and document table is one DuckDB table.

    `\\tables` lists the tables (name, kind, rows, columns, aliases). `\\schema <table>` shows a
    table's columns, types and 5 sample rows (aliases accepted). `\\lint` checks knowledge.md
    against the data (names that do not exist, example SQL that fails or returns nothing, stated
    values that never occur). `\\joins <A> <B>` lists candidate join keys between two tables with
    the share of A's keys found in B and the fan-out (most B rows per key). `\\knowledge` shows
    knowledge.md verbatim (the prompt leaves out column types and examples the table
    descriptions already give); a long one comes in parts, `\\knowledge N` shows part N.
    `\\link <text>` finds which tables, columns and values a text names (table names with its
    months or places, values in the data; no text: the question). Anything else is run as
    read-only SQL: the answer starts with `rows: <returned> of <total>` (`(truncated)` when the
    result has more rows than shown), then the column names, then the rows (NULL bare, text that
    could be mistaken for it quoted: 'NULL', ''), and notes any rewrite applied to the SQL. Do not answer from a preview: the
    final query belongs in solver.py.

    Args:
        query: `\\tables`, `\\schema <table>`, `\\lint`, `\\joins <A> <B>`, `\\knowledge [N]`, `\\link <text>`, or one read-only SQL statement (DuckDB dialect; table and column names with spaces or Chinese characters in double quotes).
        limit: Maximum rows to show for SQL (at most 500).
    """
    text = query.strip()
    if not text:
        return ToolResult.retry("query is empty: send `\\tables`, `\\schema <table>` or a SELECT statement.")
    if text.startswith("\\"):
        return _command(ctx, text)
    result = ctx.open_catalog().query(text, limit=min(limit, MAX_LIMIT))
    out = render_result(result)
    why = _why_empty(ctx, result)
    if why:
        out += f"\nwhy: {why}"
    if limit > MAX_LIMIT:
        out += f"\nnote: limit capped at {MAX_LIMIT}."
    # The result (its row counts, the SQL as sent) rides along for the program: the agent keeps
    # the latest query that returned rows for its fallback.
    return ToolResult(out, value=dataclasses.replace(result, sql=text))


def _why_empty(ctx: ToolContext, result: QueryResult) -> str:
    """For a result with no rows, or a count of 0, what each of its filters alone keeps (the diagnosis the
    answer checks give): '' when there is nothing to measure (a result with rows, a query without filters).
    A small model re-sent the filter that emptied its result six times when this said only `rows: 0 of 0`."""
    zero_count = result.total_rows == len(result.rows) and counts_zero(result.sql, result.rows)
    if result.total_rows and not zero_count:
        return ""
    diagnosis = explain_empty(ctx.open_catalog(), result.sql, zero_count=zero_count, timeout_s=DIAGNOSIS_QUERY_S,
                              budget_s=DIAGNOSIS_BUDGET_S)
    measured = diagnosis.probes or diagnosis.having_empties or diagnosis.join_sides or diagnosis.empty_selects
    return diagnosis.message() if measured else ""


def _command(ctx: ToolContext, text: str) -> ToolResult:
    word, _, rest = text.partition(" ")
    word = word.lower()
    if word in ("\\tables", "\\dt", "\\d") and not rest.strip():
        return ToolResult(_render_tables(ctx))
    if word in ("\\schema", "\\d", "\\describe") and rest.strip():
        return ToolResult(ctx.open_catalog().describe(rest.strip(), sample_rows=SAMPLE_ROWS))
    if word == "\\schema":
        return ToolResult.retry("\\schema needs a table name, e.g. `\\schema orders`.")
    if word == "\\lint" and not rest.strip():
        knowledge = ctx.open_catalog().files_of(ctx.layout.context).knowledge_text()
        if not knowledge.strip():
            return ToolResult("this task has no knowledge.md")
        return ToolResult(lint_knowledge(ctx.open_catalog(), knowledge).render())
    if word == "\\knowledge":
        return _knowledge(ctx, rest.strip())
    if word == "\\link":
        catalog = ctx.open_catalog()
        knowledge = catalog.files_of(ctx.layout.context).knowledge_text()
        links = link_question(catalog, rest.strip() or ctx.task.question, knowledge=knowledge)
        found = links.render() or "nothing in that text names a table, column or value of this task"
        return ToolResult(found + (f"\nnote: {links.cut}" if links.cut else ""))
    if word == "\\joins":
        tables = _words(rest)
        if len(tables) != 2:
            return ToolResult.retry("\\joins needs two table names, e.g. `\\joins orders customers` "
                                    "(double-quote a name with spaces).")
        return ToolResult(render_joins(*join_candidates(ctx.open_catalog(), *tables)))
    return ToolResult.retry(
        f"unknown command {word!r}: use `\\tables`, `\\schema <table>`, `\\lint`, `\\joins <A> <B>`, `\\knowledge [N]`, "
        "`\\link <text>`, "
        "or plain SQL.")


def _knowledge(ctx: ToolContext, number: str) -> ToolResult:
    """`\\knowledge` (all of it, or its first part when long) and `\\knowledge N` (part N)."""
    knowledge = ctx.open_catalog().files_of(ctx.layout.context).knowledge_file()
    if not knowledge.text.strip():
        return ToolResult("this task has no knowledge.md")
    parts = len(knowledge.bounds())
    part = knowledge.part(int(number)) if number.isdigit() else None if number else knowledge.part(1)
    if part is None:
        return ToolResult.retry(f"knowledge.md has {parts} part(s): `\\knowledge 1` … `\\knowledge {parts}`.")
    return ToolResult(part)


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _render_tables(ctx: ToolContext) -> str:
    catalog = ctx.open_catalog()
    tables = catalog.tables()
    lines = [f"tables: {len(tables)}", "name\tkind\trows\tcolumns\taliases"]
    for t in tables:
        rows = t.rows_label
        columns = "?" if t.columns is None else str(len(t.columns))
        lines.append(f"{t.name}\t{t.kind}\t{rows}\t{columns}\t{', '.join(t.aliases)}")
    skipped = catalog.skipped
    if skipped:
        lines.append(f"not readable ({len(skipped)}):")
        lines += [f"  {s.path}: {s.reason}" for s in skipped]
    return "\n".join(lines)


def explore_brief(args: dict[str, Any]) -> str | None:
    """A query in a summary of older turns: its SQL on one line (None: no query to show)."""
    query = args.get("query")
    return " ".join(query.split()) if isinstance(query, str) else None
