"""The analyst's data tools. Each is a typed function whose docstring is what the model sees: the
text before `Args:` describes the tool, each `Args:` entry one parameter (the tool kit builds the
schema from the signature). Tools that produce data store the result as a handle and answer with
its metadata only (see handles.py); the handle is the result's `value`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, Union

from pydantic import Field

from datasolver.ask.config import AskLimits
from datasolver.ask.graph import Direction, related_sql
from datasolver.ask.errors import UnknownRelation
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.ops import Aggregation, SortKey, filter_sql, group_sql, join_sql, sort_sql
from datasolver.ask.package import DataPackage
from datasolver.ask.render import describe_handle, render_table
from datasolver.ask.refs import parse_ref
from datasolver.clip import clip_names
from datasolver.data import join_candidates, lint_knowledge, render_joins
from datasolver.toolkit import ToolResult

Source = Union[int, str]
MAX_COLUMNS_LISTED = 40
SAMPLE_NOTE = "(sample rows show the format, not the data: query the table for the answer)"


@dataclass
class AskContext:
    """What every tool works on: the data package, the question's result table and the limits."""

    package: DataPackage
    handles: HandleTable
    limits: AskLimits


def stored(handle: Handle) -> ToolResult:
    return ToolResult(describe_handle(handle), value=handle)


# ---------------------------------------------------------------------------------------------
def list_tables(ctx: AskContext) -> ToolResult:
    """List every table: name, row count, source file and columns. Knowledge-graph tables are
    named with their relation types."""
    return ToolResult(table_overview(ctx.package))


def table_overview(package: DataPackage, with_graphs: bool = True) -> str:
    """One line per table (also the table list of the analyst's prompt, which names graphs apart),
    each followed by what loading said about it (`note: …`), then the files that gave no table."""
    lines = []
    catalog = package.catalog
    for info in catalog.tables():
        rows = info.rows_label
        columns = info.columns or []
        shown = clip_names(columns, MAX_COLUMNS_LISTED)
        origin = f"; {info.origin}" if info.origin else ""
        lines.append(f"- {info.name} ({rows} rows; {info.source_file}{origin}): {shown}")
        lines += [f"  note: {note.reason}" for note in catalog.load_notes([info.name])]
    for graph in package.graphs if with_graphs else []:
        lines.append(f"knowledge graph {graph.describe()}")
    # A reason may start with "not read:" itself (a link, a device): said once.
    lines += [f"not read: {item.path}: {item.reason.removeprefix('not read: ')}" for item in catalog.skipped]
    return "\n".join(lines) if lines else "(no tables)"


def describe_table(ctx: AskContext, table: Source) -> ToolResult:
    """Columns with types and a few sample rows of a table (or of a stored result).

    Args:
        table: A table name, or a stored result as @N.
    """
    if parse_ref(table) is not None:
        return ToolResult(describe_handle(ctx.handles.get(table)))
    described = ctx.package.catalog.describe(str(table), sample_rows=ctx.limits.sample_rows)
    return ToolResult(described + f"\n{SAMPLE_NOTE}")


def query(ctx: AskContext, sql: str) -> ToolResult:
    """Run read-only SQL over the tables and stored results; the result is stored as a new @N and
    you see its columns, row count and first rows. Use render to read more rows.

    Args:
        sql: One read-only SELECT (DuckDB dialect). Refer to stored results as @N or @latest, e.g. SELECT * FROM @2 WHERE <condition>.
    """
    return stored(ctx.handles.query(sql))


def filter_rows(ctx: AskContext, source: Source, where: str) -> ToolResult:
    """Keep the rows of a source that satisfy a condition; stored as a new @N.

    Args:
        source: A stored result as @N (or @latest), or a table name.
        where: A SQL condition on the source's columns, e.g. <column> = 'value' AND <column> >= 2020 (stored results as @N, e.g. <column> IN (SELECT <column> FROM @2)).
    """
    relation, parents = ctx.handles.from_clause(source)
    condition, used = ctx.handles.resolve_refs(where)  # e.g. region IN (SELECT region FROM @2)
    label = f"filter {_label(ctx, source)} where {where}"
    return stored(ctx.handles.store(filter_sql(relation, condition), label, tuple(dict.fromkeys(parents + used))))


def group(
    ctx: AskContext,
    source: Source,
    *,
    by: list[str] = [],  # noqa: B006 - read only; the schema's default
    aggregations: Annotated[list[Aggregation], Field(min_length=1)],
    order_by: str | None = None,
    descending: bool = True,
    top: Annotated[int, Field(ge=1)] | None = None,
) -> ToolResult:
    """Group a source and compute several aggregations at once (count, count_distinct, sum, avg,
    min, max, median, first); optionally keep the top N groups, ties included. Stored as a new @N.

    Args:
        source: A stored result as @N (or @latest), or a table name.
        by: Columns to group by; empty for one overall row.
        aggregations: Several aggregates at once.
        order_by: Output column to order by (default with top: the first aggregation).
        descending: Order largest first.
        top: Keep the top N groups; every group tied with the N-th is kept too.
    """
    relation, parents = ctx.handles.from_clause(source)
    columns = [c for c, _ in ctx.handles.columns_of(source)]
    sql = group_sql(relation, columns, by, aggregations, order_by, descending, top)
    aggs = ", ".join(f"{a.func}({a.column or '*'})" for a in aggregations)
    label = f"group {_label(ctx, source)} by {', '.join(by) or '(all rows)'}: {aggs}"
    if top:
        label += f"; top {top} (ties kept)"
    return stored(ctx.handles.store(sql, label, parents))


def sort(
    ctx: AskContext, source: Source, by: Annotated[list[SortKey], Field(min_length=1)],
    top: Annotated[int, Field(ge=1)] | None = None,
) -> ToolResult:
    """Order a source by one or more columns; with top, keep the first N rows plus ties. Stored as a new @N.

    Args:
        source: A stored result as @N (or @latest), or a table name.
        by: Sort keys, most significant first.
        top: Keep the first N rows; rows tied with the N-th are kept too.
    """
    relation, parents = ctx.handles.from_clause(source)
    columns = [c for c, _ in ctx.handles.columns_of(source)]
    keys = ", ".join(f"{k.column}{' desc' if k.descending else ''}" for k in by)
    label = f"sort {_label(ctx, source)} by {keys}" + (f"; top {top} (ties kept)" if top else "")
    return stored(ctx.handles.store(sort_sql(relation, columns, by, top), label, parents))


def join(
    ctx: AskContext, left: Source, right: Source, on: Annotated[list[str], Field(min_length=1)],
    how: Literal["inner", "left"] = "inner",
) -> ToolResult:
    """Join two sources on exact keys. Right columns whose names repeat a left one get _right
    appended. Stored as a new @N.

    Args:
        left: A stored result as @N (or @latest), or a table name.
        right: A stored result as @N (or @latest), or a table name.
        on: Exact-key equalities: "id" (same name both sides) or "left_col = right_col".
        how: inner: matching rows only; left: every left row.
    """
    lsql, lp = ctx.handles.from_clause(left)
    rsql, rp = ctx.handles.from_clause(right)
    sql = join_sql(lsql, [c for c, _ in ctx.handles.columns_of(left)], rsql,
                   [c for c, _ in ctx.handles.columns_of(right)], on, how)
    label = f"{how} join {_label(ctx, left)} with {_label(ctx, right)} on {', '.join(on)}"
    return stored(ctx.handles.store(sql, label, tuple(dict.fromkeys(lp + rp))))


def related(
    ctx: AskContext, entity: str, relation: str | None = None, direction: Direction = "auto", graph: str | None = None,
) -> ToolResult:
    """Relations of an entity in a knowledge graph, in the right direction: a type declared
    symmetric (e.g. compatibility) is found whichever side the entity was stored on. Columns:
    entity, relation, related, direction, related_name. Stored as a new @N.

    Args:
        entity: The entity's id (key) or its name.
        relation: Only this relation type (default: all types).
        direction: auto: relations the entity has (symmetric types both ways); out: entity is the source; in: entity is the target; both.
        graph: The relation table, when the data has more than one graph.
    """
    graphs = ctx.package.graphs
    if not graphs:
        raise UnknownRelation("this data has no knowledge-graph relation table (source, type, target)")
    if graph is None:
        chosen = graphs[0]
    else:
        matches = [g for g in graphs if g.relations.lower() == graph.strip().lower()]
        if not matches:
            raise UnknownRelation(f"no relation table {graph!r}. Graphs: {', '.join(g.relations for g in graphs)}")
        chosen = matches[0]
    sql = related_sql(chosen, entity, relation, direction)
    label = f"related {entity!r} {relation or 'all types'} {direction}"
    return stored(ctx.handles.store(sql, label))


def lint(ctx: AskContext) -> ToolResult:
    """Check knowledge.md against the data: table and column names it mentions that do not exist
    (with the nearest real names), example SQL that fails or returns no rows, and values it states
    for a column that occur in no row. Trust the data over the text where they disagree."""
    if not ctx.package.knowledge.strip():
        return ToolResult("this data has no knowledge.md")
    return ToolResult(lint_knowledge(ctx.package.catalog, ctx.package.knowledge).render())


def join_keys(ctx: AskContext, left: str, right: str) -> ToolResult:
    """Candidate join keys between two tables (similar column names, compatible types), each with
    the share of A's distinct keys found in B and the fan-out (most B rows per key): join on the
    key with full coverage, not on a look-alike.

    Args:
        left: Table A (its keys are looked up in B).
        right: Table B.
    """
    return ToolResult(render_joins(*join_candidates(ctx.package.catalog, left, right)))


def render(ctx: AskContext, source: Source = "latest", max_rows: Annotated[int, Field(ge=1)] = 20) -> ToolResult:
    """Show the rows of a stored result as a table (up to max_rows). When it has more rows than an
    answer should spell out, answer with a {DATA} template instead of copying rows.

    Args:
        source: A stored result as @N or @latest.
        max_rows: Rows to show (capped by the program).
    """
    handle = ctx.handles.get(source)
    result = ctx.handles.fetch(handle.index, min(max_rows, ctx.limits.render_rows))
    return ToolResult(render_table(handle, result, ctx.limits.answer_rows))


def _label(ctx: AskContext, source: Source) -> str:
    """`@N` with "latest" resolved, or the table name: how a step is described later."""
    ref = parse_ref(source)
    return ctx.handles.get(ref).ref if ref is not None else str(source)
