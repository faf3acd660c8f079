"""On rows: a question naming several entities that live in different look-alike tables, answered from one.

A question named two housing estates, each in another city's table (`苏州市相城区土地成交信息表`,
`广州市增城区土地成交信息表`: the same columns, the names differing by the city); the real model's query
read one city's table, returned the one estate's row, every check passed, and the answer was wrong.
The linking knows where each value the question names lives (`data/linking.QuestionLinks.values`).
When the question names two or more values found in a group of look-alike tables (same columns and
types, names differing by one piece that is not a period: `rules/look_alikes.differing_piece`)
and the query reads one of them (once, in its own FROM, not inside a subquery) that lacks some of
those values while comparing something with one it lacks (`项目名称 IN ('a', 'b')`), the rule writes
the UNION ALL of that table and the look-alikes holding the values it lacks in its place: the query as
it was, over every named entity's rows, as a candidate the answer checks judge. Only values found
exactly count, dates and periods never (`period_union` has those).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from datasolver.data.linking import QuestionLinks, date_mentions, normalize
from datasolver.data.rules.context import ResultShape, RuleContext
from datasolver.data.rules.look_alikes import (PERIOD, differing_piece, plain_select, read_alone, read_tables, same_columns,
                                               select_all, union_in_place)

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
MAX_VALUE_HITS = 200  # of the links' value hits read, in their order (where each named value was found)
MAX_ENTITIES = 12  # distinct named values in the look-alike tables (more: the rule leaves the query alone)
MAX_UNION_TABLES = 12  # tables in the union (more would hold the named values: the rule leaves the query alone)
MAX_HOLDERS = 50  # tables holding a named value, compared with the query's table for look-alikes


def entity_union(sql: str, result: ResultShape, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` reading the union of its table and the look-alikes that hold the named values it lacks; []
    when the question names fewer than two values (or more than `MAX_ENTITIES`) in the group, the
    query's table holds every one of them or none, the query names none it lacks, reads two of a group,
    or is not one SELECT whose FROM holds the table (a LIMIT, a subquery or a set operation around it)."""
    links = context.links
    if links is None or not links.values or result.rows == 0 or len(sql) > MAX_SQL_CHARS:
        return []
    held = _held_values(links)
    if len(held) < 2 or len(held) > MAX_HOLDERS:
        return []
    tree = plain_select(sql)
    if tree is None:
        return []
    catalog = context.catalog
    read = read_tables(tree, catalog)
    groups = {table: [h for h in held if h != table and _look_alike(catalog, table, h)] for _, table in read
              if table in held}
    alone = read_alone(tree, read, lambda table: bool(groups.get(table)))
    if alone is None:
        return []
    node, table = alone
    if any(other != table and _look_alike(catalog, table, other) for _, other in read):
        return []  # it reads two of the group already (a join or a union of its own)
    mine = held[table]
    named = {key: value for member in (table, *groups[table]) for key, value in held[member].items()}
    lacking = {key: value for key, value in named.items() if key not in mine}
    if len(named) < 2 or not lacking or len(named) > MAX_ENTITIES or not _asks_for(tree, lacking):
        return []
    others = [h for h in groups[table] if any(key in held[h] for key in lacking)]
    members = [name for name in catalog.names() if name == table or name in others]
    if len(members) > MAX_UNION_TABLES:
        return []
    rewritten = union_in_place(tree, node, [select_all(m) for m in members])
    if rewritten is None:
        return []
    found = ", ".join(f"{value} in {h}" for h in others for key, value in held[h].items() if key in lacking)
    return [(rewritten.sql(dialect="duckdb"),
             f"the question names {len(named)} values of look-alike tables and the query read {table} alone, "
             f"which lacks {', '.join(lacking.values())} ({found}): the union of {', '.join(members)}")]


def _held_values(links: QuestionLinks) -> dict[str, dict[str, str]]:
    """{table: {normalized value: value}} of the values the question names, found exactly (no dates,
    no periods, no near spellings), in the first MAX_VALUE_HITS of the links' value hits."""
    held: dict[str, dict[str, str]] = {}
    for hit in links.values[:MAX_VALUE_HITS]:
        if hit.how != "exact" or hit.from_dates or date_mentions(hit.value) or PERIOD.search(hit.value):
            continue
        held.setdefault(hit.table, {}).setdefault(normalize(hit.value), hit.value)
    return held


def _asks_for(tree: exp.Select, lacking: dict[str, str]) -> bool:
    """Whether the query compares something with a value its table lacks (`name IN ('a', 'b')`, `LIKE '%b%'`):
    a query that names none of them asks for nothing the union adds, and over an unfiltered query the
    union would add rows the question may not ask for."""
    return any(normalize(literal.this.strip("%")) in lacking for literal in tree.find_all(exp.Literal)
               if literal.is_string)


def _look_alike(catalog: Catalog, a: str, b: str) -> bool:
    """Same columns and types, names differing by one piece that writes no period (a city, not a year)."""
    piece = differing_piece(a, b)
    return piece is not None and not any(PERIOD.search(p) for p in piece) and same_columns(catalog, a, b)
