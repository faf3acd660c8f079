"""On error: columns written in another spelling convention (`teacher_id` for TeacherID), respelled as the
query's tables write them, each from the table that has it.

The real 1.5B model wrote `t1.teacher_id`, `t1.mark_obtained` over tables whose columns are TeacherID and
MarkObtained (falcon_233): DuckDB names one column at a time and offers the respelling only for the table it
looked in, while MarkObtained lives in the other table of the join. The program knows every column of the
query's tables: each reference that its table lacks and that equals exactly one column of a query table once
case, underscores, hyphens and spaces are ignored is written as that column, under its own alias when its
table has it, else under the one alias whose table has it. One rewrite, all references at once, as a
candidate the answer checks judge.
"""

from __future__ import annotations

import re

from sqlglot import exp

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.join_path import column_names, from_tables
from datasolver.data.sql_tree import parse_select

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
CHANGES_SHOWN = 6  # distinct respellings named in the reason (all are made)

_SEPARATORS = re.compile(r"[\s_\-]+")


def squashed(name: str) -> str:
    """A column's name without case, underscores, hyphens or whitespace: `teacher_id`, `TeacherID` and
    `Teacher ID` are one."""
    return _SEPARATORS.sub("", name).casefold()


def respelled_column(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with each column reference its table lacks written as the one column of a query table it equals
    once squashed (`squashed`); [] when the error names no missing column, the query is not one plain SELECT of
    catalog tables, or the missing column has no such respelling (one spelt alike in another table of the
    query is `moved_column`'s case; this rule moves the other references with it)."""
    if error.missing_column is None or len(sql) > MAX_SQL_CHARS:
        return []
    tree = parse_select(sql)
    if tree is None:
        return []
    tables = from_tables(tree, context.catalog)
    if not tables:
        return []
    own = {alias: {c.casefold() for c in column_names(context.catalog, table)} for alias, table in tables.items()}
    spelt: dict[str, dict[str, list[str]]] = {alias: {} for alias in tables}
    for alias, table in tables.items():
        for name in column_names(context.catalog, table):
            spelt[alias].setdefault(squashed(name), []).append(name)
    copy = tree.copy()
    named = {e.alias.casefold() for e in tree.expressions if isinstance(e, exp.Alias)}  # ORDER BY total
    changes: list[str] = []
    fixed_missing = False
    for node in list(copy.find_all(exp.Column)):
        found = _respelled(node, tables, own, spelt, named)
        if found is None:
            continue
        alias, name = found
        written = node.sql(dialect="duckdb")
        node.replace(exp.column(name, table=alias if node.table or len(tables) > 1 else None, quoted=True))
        changes.append(f"{written} → {alias}.{name}")
        fixed_missing = fixed_missing or (node.name.casefold() == error.missing_column.casefold()
                                          and name.casefold() != node.name.casefold())
    if not fixed_missing:
        return []
    shown = list(dict.fromkeys(changes))[:CHANGES_SHOWN]
    return [(copy.sql(dialect="duckdb"), "columns as the tables spell them: " + ", ".join(shown))]


def _respelled(node: exp.Column, tables: dict[str, str], own: dict[str, set[str]],
               spelt: dict[str, dict[str, list[str]]], named: set[str]) -> tuple[str, str] | None:
    """(alias, column) for a reference its table lacks (a bare one: no query table has it) and that one column
    of a query table spells otherwise: its own table's first, else the only table's that has one; None when
    it binds as written, is an output name, or the respelling is missing or ambiguous."""
    key = node.name.casefold()
    alias = next((a for a in tables if a.casefold() == node.table.casefold()), None) if node.table else None
    if node.table and alias is None:
        return None  # a subquery's or an unknown qualifier
    if alias is not None and key in own[alias]:
        return None
    if alias is None and (key in named or any(key in columns for columns in own.values())):
        return None
    target = squashed(node.name)
    owners = [a for a in tables if len(spelt[a].get(target, ())) == 1]
    home = alias if alias in owners else owners[0] if len(owners) == 1 else None
    return (home, spelt[home][target][0]) if home is not None else None
