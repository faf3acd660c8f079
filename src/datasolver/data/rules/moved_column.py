"""On error: a column looked for in the wrong table of a join, taken from the table that has it.

The real 1.5B model wrote `T2.所属集团` where T1 has the column, and wrote the same query four times
after the hint named T1. The rule rewrites the query with the column taken from the query's table that
has it, and, first, with the column DuckDB offers in T2 ("Candidate bindings") when the question
linking links that column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from datasolver.data.duck_errors import DuckError
from datasolver.data.errors import DataError
from datasolver.data.names import quote_ident
from datasolver.data.sql_tree import parse_statement
from datasolver.data.sql_tokens import Token, significant, tokenize, unquote
from datasolver.data.rules.context import RuleContext

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
OFFERS_CONSIDERED = 50  # DuckDB's candidate bindings read, in its order


def moved_column(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with `alias.column`, which DuckDB did not find in that alias's table, rewritten: the column
    taken from the query's other table that has it (`T1.所属集团`), and, before it, the alias's own column
    DuckDB offers in its place ("Candidate bindings") when the question linking links that column (the
    question's 开发 in 集团开发商). [] when the error is another or the column is in no other table of
    the query; the taken column is not written where a join condition would compare a column with itself
    (`_compares_itself`: the joined table lacks its key, `link_table`'s case)."""
    if error.qualifier is None or error.missing_column is None or len(sql) > MAX_SQL_CHARS:
        return []
    alias, column, catalog, links = error.qualifier, error.missing_column, context.catalog, context.links
    tables = _query_tables(sql, catalog)
    table = tables.get(alias.casefold())
    if table is None:
        return []
    homes = [a for a, t in tables.items() if a != alias.casefold()
             and any(c.casefold() == column.casefold() for c in catalog.column_names(t, load=False) or [])]
    if not homes:  # a column no table of the query has: DuckDB's offer is a guess by spelling alone
        return []
    found: list[tuple[str, str]] = []
    home = homes[0]
    variant = _requalified(sql, alias, column, home_alias=_written_alias(sql, home), new_column=None)
    if variant is not None and not _compares_itself(variant):
        found.append((variant, f"{column} taken from {tables[home]}, the query's table that has it"))
    # DuckDB's offer is a guess by spelling (dev-en academic_7: `citing` for citation_num, a wrong answer
    # that passed every check): taken only when the question linking links that column, and then first.
    own = {c.casefold(): c for c in catalog.column_names(table, load=False) or []}
    linked = {c.casefold() for t, c in (links.columns if links is not None else ()) if t == table}
    offered = [own[key] for key in (_bare(name, tables).casefold() for name in error.candidates[:OFFERS_CONSIDERED])
               if key in own and key in linked]
    if offered:
        variant = _requalified(sql, alias, column, home_alias=None, new_column=offered[0])
        if variant is not None:
            found.insert(0, (variant, f"{alias}.{offered[0]}, the column of {table} DuckDB offers and the question "
                                      f"names, for {alias}.{column}"))
    return found


def _compares_itself(sql: str) -> bool:
    """Whether a join condition of `sql` compares a column with itself (`T1.paperid = T1.paperid`): the column
    moved was the joined table's key, which it lacks (`link_table`'s case), and the join became a cross join
    (scholar_10's ratio over it passed every check)."""
    tree = parse_statement(sql)
    if tree is None:
        return False
    for join in tree.find_all(exp.Join):
        for equal in (join.args.get("on") or exp.Null()).find_all(exp.EQ):
            sides = (equal.this, equal.expression)
            if all(isinstance(side, exp.Column) for side in sides) and len(
                    {(side.table.casefold(), side.name.casefold()) for side in sides}) == 1:
                return True
    return False


def _bare(name: str, tables: dict[str, str]) -> str:
    """A candidate binding without its `alias.` or `table.` prefix."""
    head, dot, rest = name.partition(".")
    return rest if dot and (head.casefold() in tables or head.casefold() in {t.casefold() for t in tables.values()}) else name


def _query_tables(sql: str, catalog: Catalog) -> dict[str, str]:
    """{alias or name, case-folded: catalog table} for each catalog table the query reads."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return {}
    found: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        try:
            name = catalog.resolve(table.name)
        except DataError:
            continue
        found[table.alias_or_name.casefold()] = name
    return found


def _written_alias(sql: str, alias: str) -> str:
    """`alias` (case-folded) as the query writes it."""
    for token in significant(tokenize(sql)):
        if _unquoted(token).casefold() == alias:
            return token.text
    return quote_ident(alias)


def _requalified(sql: str, alias: str, column: str, *, home_alias: str | None, new_column: str | None) -> str | None:
    """`sql` with each `alias.column` (bare or double-quoted parts) given another alias or another column;
    None when the query has no such reference."""
    tokens = significant(tokenize(sql))
    out, last, changed = [], 0, False
    for i in range(len(tokens) - 2):
        first, dot, name = tokens[i], tokens[i + 1], tokens[i + 2]
        if (dot.text == "." and first.kind in _NAMES and name.kind in _NAMES
                and _unquoted(first).casefold() == alias.casefold() and _unquoted(name).casefold() == column.casefold()):
            if home_alias is not None:
                out += [sql[last:first.start], home_alias]
                last = first.end
            else:
                out += [sql[last:name.start], quote_ident(new_column or column)]
                last = name.end
            changed = True
    return "".join(out) + sql[last:] if changed else None


_NAMES = ("word", "ident", "backtick")


def _unquoted(token: Token) -> str:
    return unquote(token) if token.kind in ("ident", "backtick") else token.text
