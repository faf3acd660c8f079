"""On error: a join on a key the joined table lacks, made through the link table that holds both keys.

The real 1.5B model joined `paper AS T1 JOIN keyphrase AS T2 ON T1.paperid = T2.paperid` (keyphrase has no
paperid: paperkeyphrase links the two) and `teachers AS T1 JOIN students AS T2 ON T1.TeacherID =
T2.TeacherID` (marks links them). `moved_column` read both as a column in the wrong table and compared
T1.paperid with itself, a cross join whose ratio passed every check. The program knows the keys: a table
outside the query that holds the key the other side compares (its values overlapping) and a key shared with
the table that lacks it. The rule writes that table's join between the two, as a candidate the answer
checks judge; the query's columns that their tables lack and the link table has are pointed at it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from datasolver.data.duck_errors import DuckError
from datasolver.data.names import quote_ident
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.join_path import (MIN_OVERLAP, TABLES_CONSIDERED, KeyStep, column_names, from_tables,
                                             key_overlap, key_step)
from datasolver.data.sql_tree import parse_select

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
LINKS_WRITTEN = 2  # rewrites proposed, one per link table, best-overlapping first


@dataclass(frozen=True)
class _Link:
    """A table outside the query between the two sides of a join: `key` compared with the side that has it,
    `step` the key it shares with the side that lacks the compared one."""

    table: str
    key: str  # the link table's column equal to the compared one (`paperid`)
    overlap: float  # share of the compared side's sampled values the link table holds
    step: KeyStep  # link table → the table lacking the key (`keyphraseid`)


def link_table(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with a link table joined between the two sides of the join condition `A.x = B.k` whose `B.k`
    DuckDB did not find: `A.x = j1.x` and `j1.kb = B.kb`, a key `kb` of the link table whose sampled values
    B's table holds (`MIN_OVERLAP`); [] when the error is another, the query is not one plain SELECT of catalog
    tables, or no table outside it (the first `TABLES_CONSIDERED` of the catalog) links the two."""
    alias, column = error.qualifier, error.missing_column
    if alias is None or column is None or len(sql) > MAX_SQL_CHARS:
        return []
    tree = parse_select(sql)
    if tree is None:
        return []
    catalog = context.catalog
    tables = from_tables(tree, catalog)
    lacking = next((a for a in tables if a.casefold() == alias.casefold()), None)
    held = _held_join(tree, lacking, column) if lacking is not None else None
    if held is None:
        return []
    index, other = held
    if other.table not in tables or other.table == lacking:
        return []
    in_query = set(tables.values())
    names = [t for t in catalog.names() if t not in in_query][:TABLES_CONSIDERED]
    columns = {t: {c.casefold(): c for c in column_names(catalog, t)} for t in [*in_query, *names]}
    key = other.name.casefold()
    if column.casefold() in columns[tables[lacking]] or key not in columns[tables[other.table]]:
        return []
    links = []
    for name in (t for t in names if key in columns[t]):
        overlap = key_overlap(catalog, tables[other.table], columns[tables[other.table]][key], name, columns[name][key])
        step = key_step(catalog, name, tables[lacking], columns) if overlap >= MIN_OVERLAP else None
        if step is not None and step.near_key.casefold() != key:
            links.append(_Link(name, columns[name][key], overlap, step))
    links.sort(key=lambda link: -min(link.overlap, link.step.overlap))
    found = []
    for link in links[:LINKS_WRITTEN]:
        rewritten = _linked(tree, index, tables, lacking, other, link, columns)
        found.append((rewritten, f"{tables[lacking]} has no {column}: joined through {link.table} "
                                 f"(on {other.name} = {link.key}, then {link.step.near_key} = {link.step.far_key})"))
    return found


def _held_join(tree: exp.Select, lacking: str, column: str) -> tuple[int, exp.Column] | None:
    """(index of the JOIN, the other side's column) whose ON is one equality `lacking.column = other.x`
    (either way round); None when no join's condition is that alone."""
    for index, join in enumerate(tree.args.get("joins") or []):
        on = join.args.get("on")
        if not isinstance(on, exp.EQ) or not all(isinstance(side, exp.Column) for side in (on.this, on.expression)):
            continue
        for mine, other in ((on.this, on.expression), (on.expression, on.this)):
            if mine.table.casefold() == lacking.casefold() and mine.name.casefold() == column.casefold() and other.table:
                return index, other
    return None


def _linked(tree: exp.Select, index: int, tables: dict[str, str], lacking: str, other: exp.Column, link: _Link,
            columns: dict[str, dict[str, str]]) -> str:
    """The query with the link table's join before the join at `index`: the side already read joins the link
    table, the join at `index` joins its own table to the link table."""
    copy = tree.copy()
    used = {a.casefold() for a in tables}
    name = next(f"j{n}" for n in range(1, len(used) + 2) if f"j{n}" not in used)
    joins = copy.args["joins"]
    held = joins[index]
    held_alias = held.this.alias_or_name
    step = link.step
    to_other = f"{quote_ident(other.table)}.{quote_ident(other.name)} = {name}.{quote_ident(link.key)}"
    to_lacking = f"{name}.{quote_ident(step.near_key)} = {quote_ident(lacking)}.{quote_ident(step.far_key)}"
    first, then = (to_other, to_lacking) if held_alias == lacking else (to_lacking, to_other)
    bridge = exp.Join(this=exp.alias_(exp.to_table(quote_ident(link.table), dialect="duckdb"), name, table=True),
                      on=exp.condition(first, dialect="duckdb"), side=held.args.get("side"), kind=held.args.get("kind"))
    held.set("on", exp.condition(then, dialect="duckdb"))
    copy.set("joins", [*joins[:index], bridge, *joins[index:]])
    own = columns[link.table]
    for node in list(copy.find_all(exp.Column)):
        home = tables.get(node.table)
        if home is not None and node.name.casefold() not in columns[home] and node.name.casefold() in own:
            node.replace(exp.column(own[node.name.casefold()], table=name, quoted=True))
    return copy.sql(dialect="duckdb")
