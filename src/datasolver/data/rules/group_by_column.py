"""On error: a column read outside an aggregate of a SELECT that groups, grouped by or read as ANY_VALUE.

A model that groups by a key often selects a column beside it that it forgot to group by
(`SELECT customer_id, customer_name, SUM(amount) … GROUP BY customer_id`), or selects a column next to an
aggregate with no GROUP BY at all (`SELECT region, SUM(amount) FROM orders`), and DuckDB says `column
"customer_name" must appear in the GROUP BY clause or must be part of an aggregate function`
(`DuckError.ungrouped_column`). DuckDB names one column at a time, so a query with three such columns fails
three times. The rule writes both of DuckDB's own remedies, as candidates the answer checks judge: every such
column added to the GROUP BY (first: when the column has one value per key, as a name beside its id, nothing
else changes), and every such column read as `ANY_VALUE(column)` (the groups as written, one value of the
column each; only for a SELECT that has a GROUP BY: with none, the whole table is one group, and one arbitrary
value beside a total, `ANY_VALUE(name), MAX(score)`, answers a question nobody asks). Whether it names another column once one is fixed is DuckDB's to say: each rewrite is bound
(`DESCRIBE`, nothing run) and the next column it names fixed too, up to `COLUMNS_FIXED`.

Not an on-reject rule of the engine's, though it reads only the query and its error: both remedies change
what the query means when the column is not one value per group (more groups, or an arbitrary value of
each), and the engine's on-reject stage runs the first rewrite that executes, unjudged ("nothing fuzzy",
`data/sql_repair.py`); its rules are given no error either.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from datasolver.data.duck_errors import DuckError, parse_duck_error
from datasolver.data.errors import DataError, QueryInterrupted
from datasolver.data.rules.context import RuleContext
from datasolver.data.sql_tree import parse_statement

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
COLUMNS_FIXED = 4  # ungrouped columns put right in one rewrite: DuckDB names one a time, each after the first a bind
BIND_TIMEOUT_S = 2.0  # the DESCRIBE that tells whether a rewrite binds, or which column DuckDB names next

_PLACES = ("expressions", "order", "having")  # where DuckDB requires a column grouped or aggregated


def group_by_column(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql`, whose `error` names a column read outside an aggregate of a SELECT that groups (or has
    aggregates and no GROUP BY), rewritten twice: each such column added to that SELECT's GROUP BY, and
    each read as ANY_VALUE(column); the next column DuckDB names once one is fixed fixed too, at most
    `COLUMNS_FIXED` (ANY_VALUE only where the SELECT has a GROUP BY). A rewrite that still fails to bind is left out. [] when the error is another or
    the query cannot be read."""
    if error.ungrouped_column is None or len(sql) > MAX_SQL_CHARS:
        return []
    tree = parse_statement(sql)
    if tree is None:
        return []
    found = []
    for fix, how in ((_grouped, "added to the GROUP BY"), (_any_value, "read as ANY_VALUE(…), one value of each group")):
        fixed = _fixed(tree, error.ungrouped_column, fix, context)
        if fixed is not None:
            rewritten, names = fixed
            found.append((rewritten, f"{', '.join(names)} (read outside an aggregate, not grouped) {how}"))
    return found


def _fixed(tree: exp.Expression, name: str, fix: Callable[[exp.Select, list[exp.Column]], bool],
           context: RuleContext) -> tuple[str, list[str]] | None:
    """`tree` with `fix` applied to `name`'s ungrouped occurrences, then to each next column DuckDB names,
    as SQL with the names fixed; None when a column cannot be found in the query or the rewrite does not bind."""
    copy = tree.copy()
    names: list[str] = []
    while True:
        place = _ungrouped(copy, name)
        if place is None or len(names) == COLUMNS_FIXED or not fix(*place):
            return None
        names.append(name)
        sql = copy.sql(dialect="duckdb")
        try:
            context.catalog.query(f"DESCRIBE {sql}", limit=0, timeout_s=BIND_TIMEOUT_S)
        except QueryInterrupted:
            return sql, names  # not told in time: a candidate all the same, its run decides
        except DataError as exc:
            following = parse_duck_error(str(exc)).ungrouped_column
            if following is None or following.casefold() in {n.casefold() for n in names}:
                return None
            name = following
            continue
        return sql, names


def _ungrouped(tree: exp.Expression, name: str) -> tuple[exp.Select, list[exp.Column]] | None:
    """The first SELECT of `tree` that reads column `name` outside an aggregate and outside its grouped
    expressions, in its SELECT list, ORDER BY or HAVING, with those occurrences; None when none does."""
    for select in tree.find_all(exp.Select):
        group = select.args.get("group")
        if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "all")):
            continue
        keys = _group_keys(select)
        aliases = {e.alias.casefold() for e in select.expressions if isinstance(e, exp.Alias)}
        found = [c for c in select.find_all(exp.Column)
                 if c.name.casefold() == name.casefold() and _outside(c, select, keys, aliases)]
        if found:
            return select, found
    return None


def _group_keys(select: exp.Select) -> set[str]:
    """The SQL of each expression `select` groups by (an ordinal or an alias read as what it names)."""
    group = select.args.get("group")
    if group is None:
        return set()
    named = {e.alias.casefold(): e.this for e in select.expressions if isinstance(e, exp.Alias)}
    keys = set()
    for key in group.expressions:
        if isinstance(key, exp.Literal) and not key.is_string and key.name.isdigit():
            index = int(key.name) - 1
            if 0 <= index < len(select.expressions):
                key = select.expressions[index].unalias()
        elif isinstance(key, exp.Column) and not key.table and key.name.casefold() in named:
            keys.add(named[key.name.casefold()].sql(dialect="duckdb"))
        keys.add(key.sql(dialect="duckdb"))
    return keys


def _outside(column: exp.Column, select: exp.Select, keys: set[str], aliases: set[str]) -> bool:
    """Whether `column` is read by `select` itself, in a place DuckDB requires grouped, outside an aggregate,
    a window and a grouped expression (and, in ORDER BY or HAVING, is no alias of the SELECT list)."""
    node: exp.Expression = column
    while node.parent is not None and node.parent is not select:
        if isinstance(node, (exp.AggFunc, exp.Window, exp.Select)) or node.sql(dialect="duckdb") in keys:
            return False
        node = node.parent
    if node.parent is not select or node.arg_key not in _PLACES or node.sql(dialect="duckdb") in keys:
        return False
    if isinstance(node, (exp.AggFunc, exp.Window)):
        return False
    return node.arg_key == "expressions" or column.table or column.name.casefold() not in aliases


def _grouped(select: exp.Select, columns: list[exp.Column]) -> bool:
    """The first occurrence added to `select`'s GROUP BY (its qualifier kept)."""
    select.group_by(columns[0].copy(), copy=False)
    return True


def _any_value(select: exp.Select, columns: list[exp.Column]) -> bool:
    """Each occurrence read as ANY_VALUE(column), one that is a whole item of the SELECT list keeping its name;
    False, nothing done, for a SELECT with no GROUP BY."""
    if select.args.get("group") is None:
        return False
    for column in columns:
        whole = column.parent is select and column.arg_key == "expressions"
        wrapped = exp.AnyValue(this=column.copy())
        column.replace(exp.alias_(wrapped, exp.to_identifier(column.name, quoted=True)) if whole else wrapped)
    return True
