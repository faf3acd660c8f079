"""On rows: a question naming several periods, answered from one of several tables that differ only by the period.

Two years asked for ("2021年和2022年…各是多少") lived in two look-alike yearly tables; the real 1.5B
model's direct query read one year, every check passed, and the answer was published after one request.
The program knows the look-alikes: tables with the same columns and types whose names differ only by a
year (or a month), its other pieces in any order (a document's table `财务表_全国企业2019年_` beside
`全国企业2020年财务表`). When the question names two or more periods of that kind and the query reads one
such table (once, in its own FROM, not inside a subquery), the rule writes the UNION ALL of the group's
tables for the named periods in its place, with a period column (named as the question's period word,
its values the periods as the table names write them; the tables' own column when they have one) put first in the SELECT list, in the GROUP BY
when the query aggregates, and last in the ORDER BY: the query aggregated as it was, once per period,
as a candidate the answer checks judge.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from datasolver.data.errors import DataError
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.question_shape import QuestionShape
from datasolver.data.rules.context import ResultShape, RuleContext
from datasolver.data.rules.look_alikes import (Period, period_of, plain_select, read_alone, read_tables, same_columns,
                                               select_all, union_in_place)

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
MAX_PERIODS = 12  # periods the question names (more: the rule leaves the query alone)
MAX_UNION_TABLES = 12  # tables in the union written
TABLES_CONSIDERED = 200  # catalog tables read for look-alikes, in catalog order

_CJK = re.compile(r"[\u3400-\u9fff]")


def period_union(sql: str, result: ResultShape, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` reading the union of the look-alike tables of the periods the question names, one row group
    per period; [] when the question names fewer than two periods of the table's kind (or more than
    `MAX_PERIODS`), the query reads no such table or reads two of a group, or is not one SELECT whose
    FROM holds the table (a LIMIT, a subquery or a set operation around it)."""
    shape = context.shape
    if shape is None or result.rows == 0 or len(sql) > MAX_SQL_CHARS:
        return []
    years, months = named_periods(shape)
    if len(years) < 2 and len(months) < 2:
        return []
    tree = plain_select(sql)
    if tree is None:
        return []
    catalog = context.catalog
    names = catalog.names()[:TABLES_CONSIDERED]
    periods = {name: p for name in names if (p := period_of(name)) is not None}
    alone = read_alone(tree, read_tables(tree, catalog), lambda table: table in periods)
    if alone is None:
        return []
    node, table = alone
    mine = periods[table]
    asked = months if len(mine.key) > 4 else years
    if not 2 <= len(asked) <= MAX_PERIODS:
        return []
    members = _look_alikes(catalog, table, mine, periods)
    chosen = [(key, members[key]) for key in asked if key in members][:MAX_UNION_TABLES]
    if len(chosen) < 2:
        return []
    column = _period_column(shape, len(mine.key) > 4)
    try:
        own = next((c for c, _ in catalog.column_types(table) if c.casefold() == column.casefold()), None)
    except DataError:
        return []
    # A table that has the period's column already (年份 in each yearly table) is unioned as it is.
    rewritten = _rewritten(tree, node, own or column, [(None if own else periods[t].label, t) for _, t in chosen])
    if rewritten is None:
        return []
    listed = ", ".join(t for _, t in chosen)
    return [(rewritten, f"the question names {len(asked)} periods ({', '.join(asked)}) and the query read {table} "
                        f"alone: the union of {listed}, with the period as {column}")]


def named_periods(shape: QuestionShape) -> tuple[list[str], list[str]]:
    """The years (YYYY) and the months (YYYY-MM) the question's dates name, in order, once each."""
    years: list[str] = []
    months: list[str] = []
    for mention in shape.dates:
        if mention.kind in ("year", "years"):
            years += mention.years
        elif mention.kind in ("month", "quarter"):
            months += mention.months
    return list(dict.fromkeys(y for y in years if y)), list(dict.fromkeys(months))


def _look_alikes(catalog: Catalog, table: str, mine: Period, periods: dict[str, Period]) -> dict[str, str]:
    """{period: table} of the tables named as `table` but for the period, with its columns and types."""
    found = {mine.key: table}
    for name, period in periods.items():
        if name == table or period.template != mine.template or len(period.key) != len(mine.key):
            continue
        if period.key not in found and same_columns(catalog, table, name):
            found[period.key] = name
    return found


def _period_column(shape: QuestionShape, monthly: bool) -> str:
    """The period column's name: the question's own word for it (年份, 月份, year, month)."""
    if _CJK.search(shape.text):
        for word in (("月份", "年月") if monthly else ("年份", "年度")):
            if word in shape.text:
                return word
        return "月份" if monthly else "年份"
    return "month" if monthly else "year"


def _rewritten(tree: exp.Select, node: exp.Table, column: str, members: list[tuple[str | None, str]]) -> str | None:
    """The query with `node` replaced by the union of `members` ((period label, table); a label of None:
    the table has the period column already) and the period column selected, grouped and ordered by."""
    alias = node.alias_or_name
    tree = union_in_place(tree, node, [select_all(t) if label is None else
                                       f"SELECT {quote_literal(label)} AS {quote_ident(column)}, * FROM {quote_ident(t)}"
                                       for label, t in members])
    if tree is None:
        return None
    period = exp.column(column, table=alias, quoted=True)
    selected = {e.alias_or_name.casefold() for e in tree.expressions}
    if not any(isinstance(e, exp.Star) for e in tree.expressions) and column.casefold() not in selected:
        tree.set("expressions", [period.copy(), *tree.expressions])
    if tree.args.get("group") is not None:
        tree.set("group", exp.Group(expressions=[period.copy(), *tree.args["group"].expressions]))
    elif any(a.find_ancestor(exp.Select) is tree for a in tree.find_all(exp.AggFunc)):
        tree.set("group", exp.Group(expressions=[period.copy()]))
    order = tree.args.get("order")
    ordered = [*order.expressions] if order is not None else []
    tree.set("order", exp.Order(expressions=[*ordered, exp.Ordered(this=period.copy())]))
    return tree.sql(dialect="duckdb")
