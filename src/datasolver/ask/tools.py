"""The analyst's data tools. Each docstring is the description the model sees; each argument
model's field descriptions are its parameter descriptions. Tools that produce data store the
result as a handle and answer with its metadata only (see handles.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

from pydantic import BaseModel, Field

from datasolver.ask.config import AskLimits
from datasolver.ask.graph import Direction, related_sql
from datasolver.ask.errors import UnknownRelation
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.ops import Aggregation, SortKey, filter_sql, group_sql, join_sql, sort_sql
from datasolver.ask.package import DataPackage
from datasolver.ask.render import describe_handle, render_table
from datasolver.ask.refs import parse_ref

Source = Union[int, str]
_SOURCE_HELP = "A stored result as @N (or @latest), or a table name."
MAX_COLUMNS_LISTED = 40


@dataclass
class AskContext:
    """What every tool works on: the data package, the question's result table and the limits."""

    package: DataPackage
    handles: HandleTable
    limits: AskLimits


@dataclass(frozen=True)
class AskToolResult:
    """A tool's answer. kind "retry": fix the arguments; "failed": the data said no, adapt."""

    text: str
    kind: Literal["ok", "retry", "failed"] = "ok"
    handle: Handle | None = None

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


def stored(handle: Handle) -> AskToolResult:
    return AskToolResult(describe_handle(handle), handle=handle)


# ---------------------------------------------------------------------------------------------
class ListTablesArgs(BaseModel):
    """No arguments."""


def list_tables(ctx: AskContext, args: ListTablesArgs) -> AskToolResult:
    """List every table: name, row count, source file and columns. Knowledge-graph tables are
    named with their relation types."""
    return AskToolResult(table_overview(ctx.package))


def table_overview(package: DataPackage, with_graphs: bool = True) -> str:
    """One line per table (also the table list of the analyst's prompt, which names graphs apart)."""
    lines = []
    for info in package.catalog.tables():
        rows = "?" if info.rows is None else (str(info.rows) if info.rows_exact else f"~{info.rows}")
        columns = info.columns or []
        shown = ", ".join(columns[:MAX_COLUMNS_LISTED]) + (f", … ({len(columns)} columns)" if len(columns) > MAX_COLUMNS_LISTED else "")
        origin = f"; {info.origin}" if info.origin else ""
        lines.append(f"- {info.name} ({rows} rows; {info.source_file}{origin}): {shown}")
    for graph in package.graphs if with_graphs else []:
        lines.append(f"knowledge graph {graph.describe()}")
    return "\n".join(lines) if lines else "(no tables)"


class DescribeArgs(BaseModel):
    table: Source = Field(description="A table name, or a stored result as @N.")


def describe_table(ctx: AskContext, args: DescribeArgs) -> AskToolResult:
    """Columns with types and a few sample rows of a table (or of a stored result)."""
    if parse_ref(args.table) is not None:
        return AskToolResult(describe_handle(ctx.handles.get(args.table)))
    return AskToolResult(ctx.package.catalog.describe(str(args.table), sample_rows=ctx.limits.sample_rows))


class QueryArgs(BaseModel):
    sql: str = Field(description="One read-only SELECT (DuckDB dialect). Refer to stored results as @N or "
                                 "@latest, e.g. SELECT * FROM @2 WHERE total > 10.")


def query(ctx: AskContext, args: QueryArgs) -> AskToolResult:
    """Run read-only SQL over the tables and stored results; the result is stored as a new @N and
    you see its columns, row count and first rows. Use render to read more rows."""
    return stored(ctx.handles.query(args.sql))


class FilterArgs(BaseModel):
    source: Source = Field(description=_SOURCE_HELP)
    where: str = Field(description="A SQL condition on the source's columns, e.g. region = 'North' AND year >= 2020 "
                                   "(stored results as @N, e.g. id IN (SELECT id FROM @2)).")


def filter_rows(ctx: AskContext, args: FilterArgs) -> AskToolResult:
    """Keep the rows of a source that satisfy a condition; stored as a new @N."""
    relation, parents = ctx.handles.from_clause(args.source)
    condition, used = ctx.handles.resolve_refs(args.where)  # e.g. region IN (SELECT region FROM @2)
    label = f"filter {_label(ctx, args.source)} where {args.where}"
    return stored(ctx.handles.store(filter_sql(relation, condition), label, tuple(dict.fromkeys(parents + used))))


class GroupArgs(BaseModel):
    source: Source = Field(description=_SOURCE_HELP)
    by: list[str] = Field(default_factory=list, description="Columns to group by; empty for one overall row.")
    aggregations: list[Aggregation] = Field(min_length=1, description="Several aggregates at once.")
    order_by: str | None = Field(None, description="Output column to order by (default with top: the first aggregation).")
    descending: bool = Field(True, description="Order largest first.")
    top: int | None = Field(None, ge=1, description="Keep the top N groups; every group tied with the N-th is kept too.")


def group(ctx: AskContext, args: GroupArgs) -> AskToolResult:
    """Group a source and compute several aggregations at once (count, count_distinct, sum, avg,
    min, max, median, first); optionally keep the top N groups, ties included. Stored as a new @N."""
    relation, parents = ctx.handles.from_clause(args.source)
    columns = [c for c, _ in ctx.handles.columns_of(args.source)]
    sql = group_sql(relation, columns, args.by, args.aggregations, args.order_by, args.descending, args.top)
    aggs = ", ".join(f"{a.func}({a.column or '*'})" for a in args.aggregations)
    label = f"group {_label(ctx, args.source)} by {', '.join(args.by) or '(all rows)'}: {aggs}"
    if args.top:
        label += f"; top {args.top} (ties kept)"
    return stored(ctx.handles.store(sql, label, parents))


class SortArgs(BaseModel):
    source: Source = Field(description=_SOURCE_HELP)
    by: list[SortKey] = Field(min_length=1, description="Sort keys, most significant first.")
    top: int | None = Field(None, ge=1, description="Keep the first N rows; rows tied with the N-th are kept too.")


def sort(ctx: AskContext, args: SortArgs) -> AskToolResult:
    """Order a source by one or more columns; with top, keep the first N rows plus ties. Stored as a new @N."""
    relation, parents = ctx.handles.from_clause(args.source)
    columns = [c for c, _ in ctx.handles.columns_of(args.source)]
    keys = ", ".join(f"{k.column}{' desc' if k.descending else ''}" for k in args.by)
    label = f"sort {_label(ctx, args.source)} by {keys}" + (f"; top {args.top} (ties kept)" if args.top else "")
    return stored(ctx.handles.store(sort_sql(relation, columns, args.by, args.top), label, parents))


class JoinArgs(BaseModel):
    left: Source = Field(description=_SOURCE_HELP)
    right: Source = Field(description=_SOURCE_HELP)
    on: list[str] = Field(min_length=1, description='Exact-key equalities: "id" (same name both sides) or "left_col = right_col".')
    how: Literal["inner", "left"] = Field("inner", description="inner: matching rows only; left: every left row.")


def join(ctx: AskContext, args: JoinArgs) -> AskToolResult:
    """Join two sources on exact keys. Right columns whose names repeat a left one get _right
    appended. Stored as a new @N."""
    left, lp = ctx.handles.from_clause(args.left)
    right, rp = ctx.handles.from_clause(args.right)
    sql = join_sql(left, [c for c, _ in ctx.handles.columns_of(args.left)], right,
                   [c for c, _ in ctx.handles.columns_of(args.right)], args.on, args.how)
    label = f"{args.how} join {_label(ctx, args.left)} with {_label(ctx, args.right)} on {', '.join(args.on)}"
    return stored(ctx.handles.store(sql, label, tuple(dict.fromkeys(lp + rp))))


class RelatedArgs(BaseModel):
    entity: str = Field(description="The entity's id (key) or its name.")
    relation: str | None = Field(None, description="Only this relation type (default: all types).")
    direction: Direction = Field("auto", description="auto: relations the entity has (symmetric types both ways); "
                                                     "out: entity is the source; in: entity is the target; both.")
    graph: str | None = Field(None, description="The relation table, when the data has more than one graph.")


def related(ctx: AskContext, args: RelatedArgs) -> AskToolResult:
    """Relations of an entity in a knowledge graph, in the right direction: a type declared
    symmetric (e.g. compatibility) is found whichever side the entity was stored on. Columns:
    entity, relation, related, direction, related_name. Stored as a new @N."""
    graphs = ctx.package.graphs
    if not graphs:
        raise UnknownRelation("this data has no knowledge-graph relation table (source, type, target)")
    if args.graph is None:
        graph = graphs[0]
    else:
        matches = [g for g in graphs if g.relations.lower() == args.graph.strip().lower()]
        if not matches:
            raise UnknownRelation(f"no relation table {args.graph!r}. Graphs: {', '.join(g.relations for g in graphs)}")
        graph = matches[0]
    sql = related_sql(graph, args.entity, args.relation, args.direction)
    label = f"related {args.entity!r} {args.relation or 'all types'} {args.direction}"
    return stored(ctx.handles.store(sql, label))


class RenderArgs(BaseModel):
    source: Source = Field("latest", description="A stored result as @N or @latest.")
    max_rows: int = Field(20, ge=1, description="Rows to show (capped by the program).")


def render(ctx: AskContext, args: RenderArgs) -> AskToolResult:
    """Show the rows of a stored result as a table (up to max_rows). When it has more rows than an
    answer should spell out, answer with a {DATA} template instead of copying rows."""
    handle = ctx.handles.get(args.source)
    result = ctx.handles.fetch(handle.index, min(args.max_rows, ctx.limits.render_rows))
    return AskToolResult(render_table(handle, result, ctx.limits.answer_rows))


class FinalAnswerArgs(BaseModel):
    answer: str = Field(description="The answer text; or a template with {DATA} where the program writes every "
                                    "row of `data` (for lists longer than the answer budget).")
    data: Source | None = Field(None, description="The result whose rows fill {DATA} (default @latest).")
    row_format: str | None = Field(None, description="How each row is written in {DATA}, with {column} fields, "
                                                     "e.g. \"{region} ({total} t)\"; default: cells joined by spaces.")
    evidence: list[Source] = Field(default_factory=list, description="The results the answer rests on.")


def _label(ctx: AskContext, source: Source) -> str:
    """`@N` with "latest" resolved, or the table name: how a step is described later."""
    ref = parse_ref(source)
    return ctx.handles.get(ref).ref if ref is not None else str(source)
