"""SQL for the structured data tools (filter, group, sort, join), composed by the program.

Column names from the model are matched against the source's real columns and then quoted, so
the model's text becomes an identifier only when it names a real column. Top-N keeps ties:
`rank() <= N` lets every row that ties with the N-th in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from datasolver.ask.errors import UnknownColumn
from datasolver.errors import ToolRetry
from datasolver.data.names import quote_ident

AggFunc = Literal["count", "count_distinct", "sum", "avg", "min", "max", "median", "first"]
_AGG_SQL: dict[str, str] = {
    "count": "count({})",
    "count_distinct": "count(DISTINCT {})",
    "sum": "sum({})",
    "avg": "avg({})",
    "min": "min({})",
    "max": "max({})",
    "median": "median({})",
    "first": "any_value({})",
}


class Aggregation(BaseModel):
    """One aggregate of a group: `func(column) AS name`."""

    func: AggFunc = Field(description="count, count_distinct, sum, avg, min, max, median or first")
    column: str | None = Field(None, description="The column to aggregate; omit (or '*') for count of rows.")
    name: str | None = Field(None, description="Name of the output column; default func_column.")


class SortKey(BaseModel):
    """One sort key."""

    column: str
    descending: bool = False


def match_column(name: str, columns: list[str], where: str = "the source") -> str:
    """The real column for `name`: exact, else case-insensitive, else UnknownColumn."""
    text = name.strip().strip('"`')
    if text in columns:
        return text
    folded = [c for c in columns if c.lower() == text.lower()]
    if len(folded) == 1:
        return folded[0]
    raise UnknownColumn(f"no column {name!r} in {where}. Columns: {', '.join(columns)}")


def filter_sql(relation: str, where: str) -> str:
    """Rows of `relation` for which the SQL condition `where` holds (references already resolved
    by `HandleTable.resolve_refs`, which also refuses reserved names)."""
    condition = where.strip().rstrip(";").strip()
    if not condition:
        raise ToolRetry("the condition is empty")
    return f"SELECT * FROM {relation} WHERE ({condition})"


def group_sql(
    relation: str,
    columns: list[str],
    by: list[str],
    aggregations: list[Aggregation],
    order_by: str | None = None,
    descending: bool = True,
    top: int | None = None,
) -> str:
    """Group `relation` by `by` with several aggregates at once; optionally the top N groups."""
    keys = [match_column(c, columns) for c in by]
    select = [quote_ident(k) for k in keys]
    outputs = list(keys)
    for agg in aggregations:
        star = agg.column in (None, "", "*")
        if star and agg.func != "count":
            raise UnknownColumn(f"{agg.func} needs a column. Columns: {', '.join(columns)}")
        column = None if star else match_column(str(agg.column), columns)
        name = agg.name or (f"{agg.func}_{column}" if column else "count")
        if name.lower() in {o.lower() for o in outputs}:
            raise UnknownColumn(f"output column {name!r} is named twice; give each aggregation a distinct name")
        outputs.append(name)
        arg = "*" if column is None else quote_ident(column)
        select.append(f"{_AGG_SQL[agg.func].format(arg)} AS {quote_ident(name)}")
    sql = f"SELECT {', '.join(select)} FROM {relation}"
    if keys:
        sql += " GROUP BY " + ", ".join(quote_ident(k) for k in keys)
    if order_by is None and top is None:
        return sql
    order_col = match_column(order_by, outputs, "the grouped result") if order_by else outputs[len(keys)]
    direction = "DESC" if descending else "ASC"
    return _ordered(sql, [(order_col, direction)], top)


def sort_sql(relation: str, columns: list[str], keys: list[SortKey], top: int | None = None) -> str:
    """`relation` ordered by `keys`; with `top`, the first N rows plus every row tied with the N-th."""
    if not keys:
        raise UnknownColumn(f"give at least one column to sort by. Columns: {', '.join(columns)}")
    order = [(match_column(k.column, columns), "DESC" if k.descending else "ASC") for k in keys]
    return _ordered(f"SELECT * FROM {relation}", order, top)


def _ordered(sql: str, order: list[tuple[str, str]], top: int | None) -> str:
    clause = ", ".join(f"{quote_ident(c)} {d} NULLS LAST" for c, d in order)
    if top is None:
        return f"SELECT * FROM ({sql}) ORDER BY {clause}"
    return f"SELECT * FROM ({sql}) QUALIFY rank() OVER (ORDER BY {clause}) <= {int(top)} ORDER BY {clause}"


def join_sql(
    left: str,
    left_columns: list[str],
    right: str,
    right_columns: list[str],
    on: list[str],
    how: Literal["inner", "left"] = "inner",
) -> str:
    """Equality join on exact keys. `on` items are "col" (same name both sides) or "lcol = rcol".

    Right-side columns that repeat a left name get `_right` appended; a same-named key is kept once.
    """
    if not on:
        raise UnknownColumn("give at least one join key, e.g. [\"id\"] or [\"order_id = id\"]")
    pairs = []
    for item in on:
        lname, sep, rname = item.partition("=")
        lname = lname.strip().removeprefix("l.").removeprefix("left.")
        rname = (rname if sep else lname).strip().removeprefix("r.").removeprefix("right.")
        pairs.append((match_column(lname, left_columns, "the left source"),
                      match_column(rname, right_columns, "the right source")))
    condition = " AND ".join(f"l.{quote_ident(a)} = r.{quote_ident(b)}" for a, b in pairs)
    shared_keys = {b for a, b in pairs if a == b}
    taken = {c.lower() for c in left_columns}
    select = [f"l.{quote_ident(c)}" for c in left_columns]
    for column in right_columns:
        if column in shared_keys:
            continue
        alias = column
        while alias.lower() in taken:
            alias += "_right"
        taken.add(alias.lower())
        select.append(f"r.{quote_ident(column)}" + (f" AS {quote_ident(alias)}" if alias != column else ""))
    kind = "LEFT JOIN" if how == "left" else "JOIN"
    return f"SELECT {', '.join(select)} FROM {left} AS l {kind} {right} AS r ON {condition}"
