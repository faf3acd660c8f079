"""On error: an aggregate inside an aggregate, written as a count per key and an aggregate over the keys.

The real 1.5B model, asked for papers with more than one keyphrase, wrote
`SUM(CASE WHEN COUNT(keyphraseid) > 1 THEN 1 ELSE 0 END) … FROM paperkeyphrase` thirteen times across two
runs and eight requests, each time told "aggregate function calls cannot be nested": it does not write the
inner GROUP BY. The program knows what the inner aggregate is counted per: a column of the table named as a
key that the inner aggregate does not read (`paperid` beside `keyphraseid`). The rule writes the inner
aggregates per that key in a subquery (the query's WHERE with them) and the query's outer aggregates over
it, as candidates the answer checks judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from datasolver.data.duck_errors import DuckError
from datasolver.data.errors import DataError
from datasolver.data.joins import key_like
from datasolver.data.names import quote_ident
from datasolver.data.sql_tree import parse_select
from datasolver.data.rules.context import RuleContext

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
KEYS_TRIED = 2  # key columns the inner aggregates are grouped by, one rewrite each: linked by the question first
KEYS_CONSIDERED = 6  # key columns read (a key with a value per row makes groups of one row and is passed over)
QUERY_TIMEOUT_S = 2.0  # the query that tells whether a key has a value per row
NESTED_PREFIX = "nested_"  # the subquery's name for its i-th inner aggregate (nested_1, …)


def nested_aggregate(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql`, one SELECT of one catalog table with no GROUP BY whose aggregates hold aggregates, rewritten:
    the inner aggregates computed per key column in a subquery (with the query's WHERE), the outer ones over
    its rows. A key is a column named as one (`data/joins.key_like`) that no inner aggregate reads and whose
    values repeat (one value per row would make groups of one row), one the question linking links first, at
    most `KEYS_TRIED` of the first `KEYS_CONSIDERED`; the query's other columns must be that key. [] when
    the error is another or the query is not of that form."""
    if not error.nested_aggregate or len(sql) > MAX_SQL_CHARS:
        return []
    tree = parse_select(sql)
    if tree is None or any(tree.args.get(part) for part in ("group", "having", "joins", "with_", "distinct")):
        return []
    source = tree.args.get("from_")
    if source is None or not isinstance(source.this, exp.Table):
        return []
    try:
        table = context.catalog.resolve(source.this.name)
    except DataError:
        return []
    columns = {c.casefold(): c for c in context.catalog.column_names(table, load=False) or []}
    inner = _inner_aggregates(tree)
    read = {c.name.casefold() for agg in inner for c in agg.find_all(exp.Column)}
    if not inner or not read <= columns.keys():
        return []
    linked = {c.casefold() for t, c in (context.links.columns if context.links is not None else ()) if t == table}
    keys = [c for c in columns.values() if key_like(c) and c.casefold() not in read]
    keys.sort(key=lambda c: c.casefold() not in linked)
    found: list[tuple[str, str]] = []
    for key in keys[:KEYS_CONSIDERED]:
        if len(found) == KEYS_TRIED:
            break
        if _one_row_each(context.catalog, table, key):
            continue
        rewritten = _per_key(tree, key, source.this.alias_or_name)
        if rewritten is not None:
            written = list(dict.fromkeys(a.sql(dialect="duckdb") for a in inner))
            found.append((rewritten, f"the inner aggregate{'s' if len(written) > 1 else ''} "
                                     f"{', '.join(written)} computed per {key} "
                                     f"of {table} in a subquery, the outer aggregates over its rows"))
    return found


def _one_row_each(catalog: Catalog, table: str, key: str) -> bool:
    """Whether `key` has a value of its own on each row of `table` (grouped by it, every group is one row: the
    inner aggregate would count 1 everywhere); True when that cannot be told in time."""
    column = quote_ident(key)
    try:
        row = catalog.query(f"SELECT count(*), count(DISTINCT {column}) FROM {quote_ident(table)}", limit=1,
                            timeout_s=QUERY_TIMEOUT_S).rows[0]
    except DataError:
        return True
    return int(row[0]) == int(row[1])


def _inner_aggregates(tree: exp.Select) -> list[exp.AggFunc]:
    """Each aggregate one level inside another aggregate of `tree`'s own SELECT (not of a subquery or a
    window), in the query's order; one written twice is there twice."""
    found = []
    for node in tree.find_all(exp.AggFunc):
        if node.find_ancestor(exp.Select) is not tree or node.find_ancestor(exp.Window) is not None:
            continue
        outer = node.find_ancestor(exp.AggFunc)
        if outer is not None and outer.find_ancestor(exp.AggFunc) is None:
            found.append(node)
    return found


def _per_key(tree: exp.Select, key: str, alias: str) -> str | None:
    """The query with its inner aggregates per `key` in a subquery named `alias` (the table's own name or
    alias, so the query's qualified columns still bind); None when the query reads a column other than the key
    outside its inner aggregates."""
    copy = tree.copy()
    inner = _inner_aggregates(copy)
    names = {written: f"{NESTED_PREFIX}{number}"
             for number, written in enumerate(dict.fromkeys(a.sql(dialect="duckdb") for a in inner), 1)}
    subquery = exp.select(exp.column(key, quoted=True)).from_(copy.args["from_"].this.copy())
    for written, name in names.items():
        subquery = subquery.select(exp.alias_(next(a for a in inner if a.sql(dialect="duckdb") == written).copy(),
                                              name))
    if copy.args.get("where") is not None:
        subquery.set("where", copy.args["where"].copy())
    subquery = subquery.group_by(exp.column(key, quoted=True))
    for agg in inner:
        agg.replace(exp.column(names[agg.sql(dialect="duckdb")]))
    copy.set("where", None)
    named = {e.alias.casefold() for e in copy.expressions if isinstance(e, exp.Alias)}  # ORDER BY ratio
    for column in copy.find_all(exp.Column):
        name = column.name.casefold()
        if name != key.casefold() and not name.startswith(NESTED_PREFIX) and name not in named:
            return None
    copy.set("from_", exp.From(this=exp.Subquery(this=subquery, alias=exp.TableAlias(
        this=exp.to_identifier(alias, quoted=True)))))
    return copy.sql(dialect="duckdb")
