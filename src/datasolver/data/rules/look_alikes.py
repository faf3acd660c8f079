"""Look-alike tables and their union in a query's place: what the on-rows rules `period_union` and
`entity_union` share.

Look-alikes are tables with the same columns and types whose names differ by one piece: a period
(`sales_2021`, `sales_2022`; `period_of` reads it, for `period_union`) or something else, a city or a
district (`listings_paris`, `listings_rome`; `differing_piece` finds it, for `entity_union`). Both rules
take a query that reads one such table once, in its own FROM (`read_alone`: one plain SELECT, no LIMIT,
the table not inside a subquery or a set operation), and put the UNION ALL of several of them in that
table's place under its name or alias (`union_in_place`), so the rest of the query reads it as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from datasolver.data.errors import DataError
from datasolver.data.names import quote_ident
from datasolver.data.sql_tree import parse_select

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MIN_SHARED_CHARS = 3
"""Characters (separators aside) two names must share around the piece they differ by: `t1` and `t2`,
`a_paris` and `a_rome` are no look-alikes by name."""
MIN_SHARED_CJK = 2
"""The same for CJK characters, a word of two (`北京房源`, `上海房源` share 房源)."""

# A period in a table's name: a year (2021, 2021年), or a year and its month (2022年07月, 2021_07, 202107).
PERIOD = re.compile(r"(?<!\d)((?:19|20)\d{2})(?:\s*年)?(?:[-_./\s]?(0?[1-9]|1[0-2])(?:\s*月)?)?(?!\d)")
_SEPARATORS = re.compile(r"[\s_\-./()（）]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Period:
    """A table name read as a template and the period its name writes."""

    template: tuple[str, ...]  # the name's other pieces (split at the period and at separators), sorted
    key: str  # YYYY, or YYYY-MM
    label: str  # the period as the name writes it (2021年, 2022年07月, 2021)


def period_of(name: str) -> Period | None:
    """The period a table's name writes, when it writes exactly one."""
    found = list(PERIOD.finditer(name))
    if len(found) != 1:
        return None
    match = found[0]
    year, month = match.group(1), match.group(2)
    key = f"{year}-{int(month):02d}" if month else year
    pieces = _SEPARATORS.split(name[:match.start()]) + _SEPARATORS.split(name[match.end():])
    return Period(tuple(sorted(p.casefold() for p in pieces if p)), key, match.group(0).strip(" -_./"))


def differing_piece(a: str, b: str) -> tuple[str, str] | None:
    """The one piece two table names differ by, the rest of both the same (`listings_paris`,
    `listings_rome` → `paris`, `rome`; `苏州市相城区土地表`, `广州市增城区土地表` → `苏州市相`, `广州市增`), case
    aside; a piece never starts or ends inside a Latin word or a number (`sales_2021`, `sales_2022` →
    `2021`, `2022`). None when the names are the same, one piece is empty (`orders`, `orders_old`), or
    they share fewer than MIN_SHARED_CHARS characters besides separators (MIN_SHARED_CJK CJK ones)."""
    fa, fb = a.casefold(), b.casefold()
    if fa == fb:
        return None
    shortest = min(len(fa), len(fb))
    p = 0
    while p < shortest and fa[p] == fb[p]:
        p += 1
    s = 0
    while s < shortest - p and fa[-1 - s] == fb[-1 - s]:
        s += 1
    while p > 0 and _word(fa[p - 1]) and (_word(fa[p:p + 1]) or _word(fb[p:p + 1])):
        p -= 1
    while s > 0 and _word(fa[len(fa) - s]) and (_word(fa[len(fa) - s - 1:len(fa) - s])
                                                or _word(fb[len(fb) - s - 1:len(fb) - s])):
        s -= 1
    piece_a, piece_b = fa[p:len(fa) - s], fb[p:len(fb) - s]
    shared = _SEPARATORS.sub("", fa[:p] + fa[len(fa) - s:])
    cjk = sum(1 for ch in shared if _CJK.match(ch))
    if not _SEPARATORS.sub("", piece_a) or not _SEPARATORS.sub("", piece_b) or (
            len(shared) < MIN_SHARED_CHARS and cjk < MIN_SHARED_CJK):
        return None
    return piece_a, piece_b


def _word(ch: str) -> bool:
    """A character of a Latin word or a number (a CJK character is a piece of its own)."""
    return len(ch) == 1 and ch.isascii() and ch.isalnum()


def same_columns(catalog: Catalog, a: str, b: str) -> bool:
    """Whether two tables have the same columns and types, in the same order."""
    try:
        return catalog.column_types(a) == catalog.column_types(b)
    except DataError:
        return False


def catalog_name(catalog: Catalog, name: str) -> str | None:
    """The catalog's name of a table a query names, or None (not a table of the catalog)."""
    try:
        return catalog.resolve(name)
    except DataError:
        return None


def plain_select(sql: str) -> exp.Select | None:
    """The query as one SELECT with a FROM and no LIMIT (a union in a table's place would change
    which rows a LIMIT keeps), or None."""
    tree = parse_select(sql)
    if tree is None or tree.args.get("limit") is not None or tree.args.get("from_") is None:
        return None
    return tree


def read_tables(tree: exp.Select, catalog: Catalog) -> list[tuple[exp.Table, str]]:
    """Every table the query reads (subqueries included), with its catalog name: (node, name)."""
    return [(node, table) for node in tree.find_all(exp.Table) if (table := catalog_name(catalog, node.name))]


def read_alone(tree: exp.Select, read: list[tuple[exp.Table, str]],
               wanted: Callable[[str], bool]) -> tuple[exp.Table, str] | None:
    """The one table of `read` that `wanted` accepts, when the query reads it once and in its own FROM
    or JOIN (not inside a subquery or a set operation); None otherwise."""
    found = [(node, table) for node, table in read if wanted(table)]
    if len(found) != 1:
        return None
    node, table = found[0]
    if node.find_ancestor(exp.Select) is not tree or node.find_ancestor(exp.Subquery, exp.Union) is not None:
        return None
    return node, table


def union_in_place(tree: exp.Select, node: exp.Table, members: list[str]) -> exp.Select | None:
    """A copy of the query with the table `node` replaced by the UNION ALL of `members` (each one
    SELECT's text), under the table's alias or name; None when the union does not parse."""
    alias = node.alias_or_name
    try:
        subquery = sqlglot.parse_one(f"SELECT * FROM ({' UNION ALL '.join(members)}) AS {quote_ident(alias)}",
                                     read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    tree = tree.copy()
    target = next(t for t in tree.find_all(exp.Table) if t.name == node.name and t.alias_or_name == alias)
    target.replace(subquery.args["from_"].this)
    return tree


def select_all(table: str) -> str:
    """`SELECT * FROM "table"`: a member of a union of look-alikes."""
    return f"SELECT * FROM {quote_ident(table)}"
