"""Why a query found nothing: each filter dropped in turn, and the nearest existing values.

An empty result, or a row of NULLs (an aggregate or a scalar subquery over zero matched rows), most
often comes from one filter whose value the data spells differently. Re-running the query with each
top-level AND part of each WHERE removed, one at a time, says which filter emptied it; for
`column = 'text'` the column's existing values nearest the typed text say how the data spells it.
A HAVING that no group passes (`HAVING COUNT(*) > 100` where the most is 37) is the other filter that
empties a grouped result: each HAVING's SELECT is counted once without it, with how many groups each of its
parts keeps and what the aggregate it compares reaches (its most, for `>`; its least, for `<`).

The one implementation: the Solver's `empty_result` answer check and the analyst's send-back
before "nothing matches" both call `explain_empty`. Every query it runs has a short timeout and
the whole diagnosis a total budget, so a check never costs more than the answer it checks; a
query that fails or is stopped leaves its filter out and says why in `notes`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from datasolver.clip import clip
from datasolver.data.errors import DataError
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.sql_tree import parse_statement

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog

MAX_CONJUNCTS = 8  # filters re-run without, per WHERE; parts of a HAVING measured
MAX_HAVINGS = 2  # HAVING clauses measured, one query each (their SELECT's groups before the HAVING)
VALUE_CHARS = 40  # a value an aggregate reaches, as quoted in a message
NEAREST_VALUES = 3
QUERY_TIMEOUT_S = 5.0  # each diagnosis query
TOTAL_BUDGET_S = 20.0  # the whole diagnosis: later filters are skipped (and said so) past it
MAX_SQL_CHARS = 20_000  # longer SQL is not parsed: sqlglot's cost grows with it
SELECT_CHARS = 200  # a SELECT quoted in a message is cut here

FIX_THE_HAVING = (" A HAVING threshold that no group reaches is the one to fix: take it from the question (its "
                  "number, in the data's units), or drop it when the question states none.")
FIX_THE_FILTER = (" The filter whose removal brings rows back is the one to fix: match the data's exact "
                  "spelling, case and format.")


@dataclass(frozen=True)
class FilterProbe:
    """One filter of the query, and what the query matches without it."""

    condition: str
    """The filter as DuckDB SQL (`city = 'paris'`)."""
    rows: int
    """Rows matched with this filter removed (the others kept)."""
    nearest: tuple[str, ...] = ()
    """For `column = 'text'` (or LIKE) that brought rows back: the column's values most like the text."""

    def line(self) -> str:
        text = f"`{self.condition}`: {self.rows} rows"
        if self.nearest:
            text += f" (nearest existing values: {', '.join(repr(v) for v in self.nearest)})"
        return text


@dataclass(frozen=True)
class HavingProbe:
    """One top-level AND part of a HAVING, measured over the groups of its SELECT before the HAVING."""

    condition: str
    """The part as DuckDB SQL (`COUNT(*) > 100`)."""
    groups: int
    """The groups of its SELECT before the HAVING."""
    kept: int
    """Of them, the groups this part alone keeps."""
    measured: str = ""
    """For a comparison of an aggregate with a constant: the aggregate side as DuckDB SQL (`COUNT(*)`)."""
    reached: str = ""
    """What it reaches across the groups, the side a threshold is crossed from: `at most 37` (for > and >=),
    `at least 2` (for < and <=), `2 to 37` (for = and <>); "" when not measured."""

    def line(self) -> str:
        text = f"`{self.condition}` keeps {self.kept} of {self.groups} groups"
        return text + (f" ({self.measured} across the groups: {self.reached})" if self.reached else "")


@dataclass(frozen=True)
class JoinSide:
    """One table of a join that matched nothing, counted alone with the filters on it alone."""

    alias: str
    table: str
    rows: int
    filters: tuple[str, ...] = ()

    def line(self) -> str:
        name = self.table if self.alias.casefold() == self.table.casefold() else f"{self.alias} ({self.table})"
        where = f" with {' AND '.join(f'`{f}`' for f in self.filters)}" if self.filters else ""
        return f"{name} alone{where}: {self.rows} rows"


@dataclass(frozen=True)
class EmptySelect:
    """A SELECT of a NULL answer that matched no row, and its filters dropped one at a time."""

    select: str
    probes: tuple[FilterProbe, ...]


@dataclass
class EmptyDiagnosis:
    """Why a result is empty (`null_rows` == 0) or all NULL (`null_rows` rows), as far as known."""

    null_rows: int = 0
    zero_count: bool = False
    """A count of 0 (one row of zero counts): like a NULL answer, diagnosed by its SELECTs that matched no row."""
    readable: bool = False
    """Whether the SQL was known and read; without it only general advice can be given."""
    probes: list[FilterProbe] = field(default_factory=list)
    """For an empty result: the filters of every WHERE, each dropped in turn."""
    having: list[HavingProbe] = field(default_factory=list)
    """For an empty result: the parts of each HAVING (at most `MAX_HAVINGS`), measured over their SELECT's groups."""
    empty_selects: list[EmptySelect] = field(default_factory=list)
    """For a NULL answer: each SELECT that matched no row."""
    join_sides: list[JoinSide] = field(default_factory=list)
    """For an empty join whose filters, dropped one at a time, bring nothing back: each table alone."""
    join_on: str = ""
    """That join's conditions as DuckDB SQL."""
    notes: list[str] = field(default_factory=list)
    """Diagnosis queries that failed or were stopped (for traces, not for the model)."""

    @property
    def brings_rows_back(self) -> list[FilterProbe]:
        """The filters whose removal alone gives rows."""
        found = self.probes + [p for s in self.empty_selects for p in s.probes]
        return [p for p in found if p.rows]

    @property
    def having_empties(self) -> list[HavingProbe]:
        """The HAVING parts that keep none of the groups their SELECT has: what emptied a grouped result."""
        return [p for p in self.having if p.groups and not p.kept]

    @property
    def join_pairs_nothing(self) -> bool:
        """An empty join whose tables each have rows for their own filters: the join is the fault."""
        return (bool(self.join_sides) and all(side.rows for side in self.join_sides) and not self.brings_rows_back
                and not self.having_empties)

    def message(self) -> str:
        """What to tell whoever wrote the query: the fact, each filter's count, what to do."""
        if self.null_rows or self.zero_count:
            return self._null_message()
        head = "no rows."
        if not self.readable:
            return head + (" Re-check the filter values against the real distinct values and the join keys before "
                           "answering with an empty result.")
        if self.having_empties:
            detail = (" Its groups are there, but its HAVING keeps none: "
                      + "; ".join(p.line() for p in self.having_empties) + ".")
            if self.probes:
                detail += " Re-run without each WHERE filter: " + "; ".join("without " + p.line() for p in self.probes) + "."
            advice = FIX_THE_HAVING
        elif self.join_pairs_nothing:
            detail = (" Re-run without each filter: " + "; ".join("without " + p.line() for p in self.probes) + "."
                      if self.probes else "")
            detail += (" Each table has rows for its own filters (" + "; ".join(s.line() for s in self.join_sides)
                       + f"), but the join {self.join_on} pairs none of them.")
            advice = (" Join on columns that hold the same values (compare a few values of each key), or answer "
                      "from one table if it has every column the question needs.")
        elif self.probes:
            detail = " Re-run without each filter: " + "; ".join("without " + p.line() for p in self.probes) + "."
            advice = FIX_THE_FILTER + " If none does, check the join keys."
        else:
            detail = " The query has no WHERE filter to test."
            advice = " Check the join keys (a look-alike key matches nothing) and the table."
        return head + detail + advice

    def _null_message(self) -> str:
        n = self.null_rows
        head = (f"the answer is {n} row{'s' if n != 1 else ''} in which every cell is NULL: an aggregate or a "
                "scalar subquery over no matching rows gives NULL, not an empty result.")
        if self.zero_count:
            head = "the answer is a count of 0: a count over filters that match no row gives 0, not an empty result."
        parts = [f"`{s.select}` matches 0 rows" + ("; without " + "; without ".join(p.line() for p in s.probes)
                                                    if s.probes else "") for s in self.empty_selects]
        if parts:
            return head + " " + ". ".join(parts) + "." + FIX_THE_FILTER
        return head + (" No filter of the SQL matches zero rows. Check the column the values come from (a wrong "
                       "column, a join that found nothing, a TRY_CAST that failed).")


def counts_zero(sql: str | None, rows: Sequence[Sequence[object]]) -> bool:
    """Whether `rows` (all the rows of `sql`'s result) are one row of counts that are all 0 (or NULL), from
    a query that counts: a count over a filter that may have matched nothing (a misspelt value gives
    0, not an empty result). Such a result is diagnosed as a NULL answer is (`explain_empty(...,
    zero_count=True)`); a 0 whose SELECTs all match rows is a true 0. The one rule: the Solver's
    `empty_result` check and the analyst's checks both ask it."""
    if len(rows) != 1 or not sql:
        return False
    cells = [_zero_or_empty(cell) for cell in rows[0]]
    if not cells or None in cells or "0" not in cells:
        return False
    tree = _parse(sql)
    while isinstance(tree, exp.SetOperation):
        tree = tree.this
    return isinstance(tree, exp.Select) and any(True for _ in tree.find_all(exp.Count))


def _zero_or_empty(cell: object) -> str | None:
    """"0" for a zero (0, 0.0, '0.00'), "" for NULL or blank, None for anything else."""
    if cell is None:
        return ""
    text = str(cell).strip()
    if not text:
        return ""
    try:
        return "0" if float(text) == 0 else None
    except ValueError:
        return None


def explain_empty(catalog: Catalog | None, sql: str | None, *, null_rows: int = 0, zero_count: bool = False,
                  timeout_s: float = QUERY_TIMEOUT_S, budget_s: float = TOTAL_BUDGET_S) -> EmptyDiagnosis:
    """Why `sql` gave no rows (`null_rows` == 0) or `null_rows` rows of NULLs, asked of `catalog`;
    with `zero_count`, why a count came out 0 (which of its SELECTs matched no row; none: a true 0).

    Without a catalog or with SQL that cannot be read as one DuckDB statement, the diagnosis is
    general advice (`readable` False). Each query runs under `timeout_s`; past `budget_s` in all,
    the filters not yet tried are left out with a note.
    """
    diagnosis = EmptyDiagnosis(null_rows=null_rows, zero_count=zero_count)
    tree = _parse(sql) if catalog is not None and sql else None
    if catalog is None or tree is None:
        return diagnosis
    diagnosis.readable = True
    probe = _Prober(catalog, tree, diagnosis.notes, timeout_s, time.monotonic() + budget_s)
    if null_rows or zero_count:
        diagnosis.empty_selects = probe.empty_selects()
    else:
        diagnosis.having = probe.having_parts()
        diagnosis.probes = probe.filters_dropped()
        if not diagnosis.brings_rows_back and not diagnosis.having_empties:
            diagnosis.join_on, diagnosis.join_sides = probe.join_sides()
    return diagnosis


# -- running the probes ---------------------------------------------------------------------------

class _Prober:
    def __init__(self, catalog: Catalog, tree: exp.Expression, notes: list[str], timeout_s: float,
                 deadline: float) -> None:
        self.catalog, self.tree, self.notes = catalog, tree, notes
        self.timeout_s, self.deadline = timeout_s, deadline
        self.skipped = False

    def filters_dropped(self) -> list[FilterProbe]:
        probes = []
        for where, part in _where_conjuncts(self.tree)[:MAX_CONJUNCTS]:
            count = self._int(f"SELECT count(*) FROM ({_without(self.tree, where, part)}) AS checked")
            if count is not None:
                probes.append(FilterProbe(part.sql(dialect="duckdb"), count, self._nearest(part) if count else ()))
        return probes

    def having_parts(self) -> list[HavingProbe]:
        """Each HAVING's parts (at most `MAX_HAVINGS` HAVINGs, `MAX_CONJUNCTS` parts each), measured in one query
        over the groups of its SELECT without the HAVING."""
        found = []
        for having in list(self.tree.find_all(exp.Having))[:MAX_HAVINGS]:
            parts = _conjuncts(having.this)[:MAX_CONJUNCTS]
            select = having.parent
            if not isinstance(select, exp.Select):
                continue
            sides = [_measured(part) for part in parts]
            rows = self._rows(_groups_sql(self.tree, select, parts, sides), 1)
            if not rows:
                continue
            groups, cells = int(rows[0][0]), rows[0][1:]
            for i, (part, side) in enumerate(zip(parts, sides, strict=True)):
                kept, low, high = cells[3 * i: 3 * i + 3]
                reached = "" if side is None or groups == 0 else _reached(side[1], low, high)
                found.append(HavingProbe(part.sql(dialect="duckdb"), groups, int(kept or 0),
                                         side[0].sql(dialect="duckdb") if reached and side else "", reached))
        return found

    def empty_selects(self) -> list[EmptySelect]:
        by_where: dict[int, list[exp.Expression]] = {}
        wheres: dict[int, exp.Where] = {}
        for where, part in _where_conjuncts(self.tree):
            by_where.setdefault(id(where), []).append(part)
            wheres[id(where)] = where
        found = []
        for key, where in wheres.items():
            sql = _matched_rows_sql(self.tree, where)
            if sql is None or self._int(sql) != 0:
                continue
            probes = []
            for part in by_where[key][:MAX_CONJUNCTS]:
                count = self._int(_matched_rows_sql(self.tree, where, part) or "")
                if count is not None:
                    probes.append(FilterProbe(part.sql(dialect="duckdb"), count,
                                              self._nearest(part) if count else ()))
            select = where.parent if isinstance(where.parent, exp.Select) else where
            found.append(EmptySelect(clip(select.sql(dialect="duckdb"), SELECT_CHARS), tuple(probes)))
        return found

    def join_sides(self) -> tuple[str, list[JoinSide]]:
        """For a SELECT that joins catalog tables: each table counted alone, with the WHERE filters whose
        columns are all its own (qualified by its alias, or unqualified and in it only); and the joins'
        conditions. ("", []) for a query that is no plain join of catalog tables."""
        resolved = _joined_tables(self.tree, self.catalog, self._columns)
        if resolved is None:
            return "", []
        parts = _where_parts(self.tree)
        sides = []
        for alias, name, columns in resolved:
            own = [p for p in parts if _only_on(p, alias, columns, resolved)]
            condition = " AND ".join(p.sql(dialect="duckdb") for p in own)
            count = self._int(f"SELECT count(*) FROM {quote_ident(name)} AS {quote_ident(alias)}"
                              + (f" WHERE {condition}" if condition else ""))
            if count is None:
                return "", []
            sides.append(JoinSide(alias, name, count, tuple(p.sql(dialect="duckdb") for p in own)))
        on = " AND ".join(f"`{j.args['on'].sql(dialect='duckdb')}`" for j in self.tree.args["joins"]
                          if j.args.get("on") is not None)
        return on or "(no ON condition)", sides

    def _rows(self, sql: str, limit: int) -> list[tuple] | None:
        """The first rows of `sql` under the timeout, or None (with a note) when it failed or time is up."""
        if not sql:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            if not self.skipped:
                self.skipped = True
                self.notes.append("empty_result: the diagnosis's time budget ran out; later filters were not tried")
            return None
        try:
            return self.catalog.query(sql, limit=limit, timeout_s=min(self.timeout_s, left)).rows
        except DataError as exc:
            self.notes.append(f"empty_result: {exc}")
            return None

    def _int(self, sql: str) -> int | None:
        rows = self._rows(sql, 1)
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def _nearest(self, part: exp.Expression) -> tuple[str, ...]:
        """For `column = 'text'` (or LIKE): the column's existing values most like the text (Jaro-Winkler),
        from a catalog table of the filter's SELECT that has the column, else from its FROM clause
        as written (a CTE, a view)."""
        if not isinstance(part, (exp.EQ, exp.Like, exp.ILike)):
            return ()
        column, literal = part.this, part.expression
        if isinstance(column, exp.Literal):
            column, literal = literal, column
        if not isinstance(column, exp.Column) or not isinstance(literal, exp.Literal) or not literal.is_string:
            return ()
        target = quote_literal(literal.name.strip("%"))
        order = f"ORDER BY jaro_winkler_similarity(lower(v), lower({target})) DESC, v LIMIT {NEAREST_VALUES}"
        select = part.find_ancestor(exp.Select)
        for table in self._catalog_tables(select or part):
            if column.name not in self._columns(table):
                continue
            quoted = quote_ident(column.name)
            rows = self._rows(f"SELECT DISTINCT CAST({quoted} AS VARCHAR) AS v FROM {quote_ident(table)} "
                              f"WHERE {quoted} IS NOT NULL {order}", NEAREST_VALUES)
            if rows is not None:
                return tuple(str(r[0]) for r in rows)
        values = _values_sql(self.tree, select, column) if select is not None else None
        rows = self._rows(f"SELECT v FROM ({values}) AS vals WHERE v IS NOT NULL {order}", NEAREST_VALUES) \
            if values else None
        return tuple(str(r[0]) for r in rows) if rows else ()

    def _catalog_tables(self, node: exp.Expression) -> list[str]:
        names = []
        for table in node.find_all(exp.Table):
            try:
                names.append(self.catalog.resolve(table.name))
            except DataError:
                continue  # a CTE or a view of the session
        return names

    def _columns(self, table: str) -> set[str]:
        left = self.deadline - time.monotonic()
        try:
            probe = self.catalog.query(f"SELECT * FROM {quote_ident(table)} LIMIT 0", limit=0,
                                       timeout_s=max(min(self.timeout_s, left), 0.001))
        except DataError:
            return set()
        return set(probe.columns)


# -- the tables of a join -------------------------------------------------------------------------

Joined = tuple[str, str, set[str]]  # a joined table: its alias, the catalog table, its columns (case-folded)


def _joined_tables(tree: exp.Expression | None, catalog: Catalog,
                   columns_of: Callable[[str], Iterable[str]]) -> list[Joined] | None:
    """The tables of a SELECT that joins catalog tables (FROM and every JOIN a plain table), with the
    columns `columns_of` gives; None for any other query."""
    if not isinstance(tree, exp.Select) or not tree.args.get("joins") or tree.args.get("from_") is None:
        return None
    tables = [tree.args["from_"].this, *(join.this for join in tree.args["joins"])]
    if not all(isinstance(t, exp.Table) for t in tables):
        return None
    resolved = []
    for table in tables:
        try:
            name = catalog.resolve(table.name)
            columns = {c.casefold() for c in columns_of(name)}
        except DataError:
            return None
        resolved.append((table.alias_or_name, name, columns))
    return resolved


def _where_parts(select: exp.Expression) -> list[exp.Expression]:
    where = select.args.get("where")
    return _conjuncts(where.this) if where is not None else []


def _only_on(part: exp.Expression, alias: str, columns: set[str], resolved: list[Joined]) -> bool:
    """Whether every column of `part` is this joined table's (its alias, or unqualified and no other's)."""
    found = list(part.find_all(exp.Column))
    if not found or any(True for _ in part.find_all(exp.Subquery)):
        return False
    for column in found:
        if column.table:
            if column.table.casefold() != alias.casefold():
                return False
        elif column.name.casefold() not in columns or any(
                column.name.casefold() in other for a, _, other in resolved if a != alias):
            return False
    return True


# -- the SQL tree ---------------------------------------------------------------------------------

def _parse(sql: str) -> exp.Expression | None:
    """One DuckDB statement, or None (unreadable, several statements, or too long to parse cheaply)."""
    return parse_statement(sql, MAX_SQL_CHARS)


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def _where_conjuncts(tree: exp.Expression) -> list[tuple[exp.Where, exp.Expression]]:
    """Every top-level AND part of every WHERE, with the WHERE it belongs to."""
    return [(where, part) for where in tree.find_all(exp.Where) for part in _conjuncts(where.this)]


def _without(tree: exp.Expression, where: exp.Where, part: exp.Expression) -> str:
    """The SQL with one conjunct of one WHERE removed (the whole WHERE when it was the only one)."""
    index = next(i for i, p in enumerate(_conjuncts(where.this)) if p is part)
    copy = tree.copy()
    target = _follow(copy, _path_to(tree, where))
    kept = [p.copy() for i, p in enumerate(_conjuncts(target.this)) if i != index]
    if kept:
        target.set("this", exp.and_(*kept))
    else:
        target.pop()
    return copy.sql(dialect="duckdb")


def filter_dropped(sql: str, condition: str) -> str | None:
    """`sql` with the WHERE filter (a top-level AND part) whose DuckDB text is `condition` (a
    `FilterProbe.condition`) removed, as the probe ran it; None when the SQL has no such filter."""
    tree = _parse(sql)
    found = _probed(tree, condition) if tree is not None else None
    return _without(tree, *found) if tree is not None and found is not None else None


def filter_respelled(sql: str, condition: str, value: str) -> str | None:
    """`sql` with the string compared in the filter `condition` (`column = 'text'`) replaced by `value`;
    None when the SQL has no such filter."""
    tree = _parse(sql)
    found = _probed(tree, condition) if tree is not None else None
    if tree is None or found is None or not isinstance(found[1], exp.EQ):
        return None
    literals = [n for n in (found[1].this, found[1].expression) if isinstance(n, exp.Literal) and n.is_string]
    if len(literals) != 1:
        return None
    literals[0].replace(exp.Literal.string(value))
    return tree.sql(dialect="duckdb")


def _probed(tree: exp.Expression, condition: str) -> tuple[exp.Where, exp.Expression] | None:
    return next(((w, p) for w, p in _where_conjuncts(tree) if p.sql(dialect="duckdb") == condition), None)


def _matched_rows_sql(tree: exp.Expression, where: exp.Where, drop: exp.Expression | None = None) -> str | None:
    """`SELECT count(*)` over the rows the SELECT owning `where` matches before any grouping (with
    conjunct `drop` removed), runnable on its own: the outer query's CTEs ride along. None when the
    WHERE does not belong to a SELECT."""
    select = where.parent
    if not isinstance(select, exp.Select):
        return None
    counted = select.copy()
    condition = counted.args["where"]
    if drop is not None:
        index = next(i for i, p in enumerate(_conjuncts(where.this)) if p is drop)
        kept = [p.copy() for i, p in enumerate(_conjuncts(condition.this)) if i != index]
        if kept:
            condition.set("this", exp.and_(*kept))
        else:
            condition.pop()
    for key in ("group", "having", "order", "limit", "offset", "qualify", "distinct", "windows"):
        counted.set(key, None)
    counted.set("expressions", [exp.Count(this=exp.Star())])
    _carry_ctes(tree, select, counted)
    return counted.sql(dialect="duckdb")


_FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE, exp.EQ: exp.EQ, exp.NEQ: exp.NEQ}
_HAVING_PREFIX = "__having_"  # the measuring query's names for a HAVING part's values


def _measured(part: exp.Expression) -> tuple[exp.Expression, type[exp.Expression]] | None:
    """For a HAVING part that compares an aggregate with a constant (`COUNT(*) > 100`, `100 < SUM(x)`): the
    aggregate side and the comparison as read with it on the left; None for any other part."""
    kind = type(part)
    if kind not in _FLIPPED:
        return None
    left, right = part.this, part.expression
    if _constant(left) and not _constant(right):
        left, right, kind = right, left, _FLIPPED[kind]
    if not _constant(right) or _constant(left):
        return None
    return left, kind


def _constant(node: exp.Expression) -> bool:
    return not any(True for _ in node.find_all(exp.Column, exp.AggFunc, exp.Subquery, exp.Star))


def _groups_sql(tree: exp.Expression, select: exp.Select, parts: list[exp.Expression],
                sides: list[tuple[exp.Expression, type[exp.Expression]] | None]) -> str:
    """`SELECT count(*)` of `select`'s groups without its HAVING, then for each HAVING part the groups it keeps
    alone, and its aggregate side's least and most (NULL when it has none), runnable on its own."""
    grouped = select.copy()
    for key in ("having", "order", "limit", "offset", "qualify", "distinct"):
        grouped.set(key, None)
    measures: list[exp.Expression] = [exp.Count(this=exp.Star())]
    for i, (part, side) in enumerate(zip(parts, sides, strict=True)):
        kept, value = f"{_HAVING_PREFIX}kept_{i}", f"{_HAVING_PREFIX}value_{i}"
        # after the SELECT's own items, which the HAVING may name (`HAVING total > 5`)
        grouped.select(exp.alias_(part.copy(), kept), exp.alias_(side[0].copy() if side else exp.null(), value),
                       copy=False)
        measures += [exp.Filter(this=exp.Count(this=exp.Star()), expression=exp.Where(this=exp.column(kept))),
                     exp.Min(this=exp.column(value)), exp.Max(this=exp.column(value))]
    _carry_ctes(tree, select, grouped)
    return exp.select(*measures).from_(exp.Subquery(this=grouped, alias=exp.TableAlias(
        this=exp.to_identifier("grouped")))).sql(dialect="duckdb")


def _reached(kind: type[exp.Expression], low: object, high: object) -> str:
    """What an aggregate reaches across the groups, on the side its comparison `kind` is crossed from."""
    if low is None or high is None:
        return ""
    if kind in (exp.GT, exp.GTE):
        return f"at most {_value(high)}"
    if kind in (exp.LT, exp.LTE):
        return f"at least {_value(low)}"
    return f"{_value(low)} to {_value(high)}"


def _value(value: object) -> str:
    if isinstance(value, float):
        return clip(f"{value:.6g}", VALUE_CHARS)
    return clip(str(value), VALUE_CHARS)


def _values_sql(tree: exp.Expression, select: exp.Select, column: exp.Column) -> str | None:
    """`SELECT DISTINCT CAST(column AS VARCHAR) AS v` over the FROM clause (joins included) of
    `select`, unfiltered; the outer query's CTEs ride along."""
    if not select.args.get("from_"):
        return None
    values = select.copy()
    for key in ("where", "group", "having", "order", "limit", "offset", "qualify", "windows"):
        values.set(key, None)
    values.set("expressions", [exp.alias_(exp.cast(column.copy(), "VARCHAR"), "v")])
    values.set("distinct", exp.Distinct())
    _carry_ctes(tree, select, values)
    return values.sql(dialect="duckdb")


def _carry_ctes(tree: exp.Expression, select: exp.Select, copy: exp.Select) -> None:
    ctes = tree.args.get("with_")
    if select is not tree and ctes is not None and copy.args.get("with_") is None:
        copy.set("with_", ctes.copy())


def _path_to(root: exp.Expression, target: exp.Expression) -> list[tuple[str, int | None]]:
    path = []
    node = target
    while node is not root:
        parent = node.parent
        if parent is None:
            raise ValueError("target is not inside root")
        key = node.arg_key
        value = parent.args.get(key)
        index = value.index(node) if isinstance(value, list) else None
        path.append((key, index))
        node = parent
    return list(reversed(path))


def _follow(root: exp.Expression, path: list[tuple[str, int | None]]) -> exp.Expression:
    node = root
    for key, index in path:
        value = node.args[key]
        node = value[index] if index is not None else value
    return node


def having_dropped(sql: str, condition: str) -> str | None:
    """`sql` with the HAVING part (a top-level AND part) whose DuckDB text is `condition` (a
    `HavingProbe.condition`) removed, the whole HAVING when it was the only one; None when the SQL has none."""
    tree = _parse(sql)
    if tree is None:
        return None
    found = next(((h, p) for h in tree.find_all(exp.Having) for p in _conjuncts(h.this)
                  if p.sql(dialect="duckdb") == condition), None)
    return _without(tree, *found) if found is not None else None


__all__ = ["EmptyDiagnosis", "EmptySelect", "FilterProbe", "HavingProbe", "explain_empty", "filter_dropped",
           "filter_respelled", "having_dropped"]


def one_table_query(sql: str, catalog: Catalog) -> tuple[str, str] | None:
    """For a join of catalog tables: the same SELECT over the one table that holds every column it
    selects, groups and orders by, with the filters on that table alone (the others dropped; it must
    have one), and a note saying what was dropped; None when no such table or the SQL is no plain join. A candidate for
    a join that paired nothing (`EmptyDiagnosis.join_sides`): whoever runs it decides by its rows."""
    tree = _parse(sql)
    resolved = _joined_tables(tree, catalog, lambda name: catalog.column_names(name, load=False) or [])
    if resolved is None:
        return None
    parts = _where_parts(tree)
    used = [*tree.expressions, *(tree.args["group"].expressions if tree.args.get("group") else []),
            *(tree.args["order"].expressions if tree.args.get("order") else [])]
    if not any(True for e in used for _ in e.find_all(exp.Column)):
        return None  # `count(*)` over a join: which table's rows it counts is the question itself
    for alias, name, columns in resolved:
        if not all(_only_on(e, alias, columns, resolved) for e in used if any(True for _ in e.find_all(exp.Column))):
            continue
        own = [p for p in parts if _only_on(p, alias, columns, resolved)]
        if not own:
            continue  # the table's every row: no answer to a question that filters
        dropped = [p.sql(dialect="duckdb") for p in parts if not any(p is o for o in own)]
        single = tree.copy()
        single.set("joins", None)
        single.set("from_", exp.From(this=exp.to_table(quote_ident(name), dialect="duckdb").as_(alias)))
        single.set("where", exp.Where(this=exp.and_(*[o.copy() for o in own])) if own else None)
        note = f"the join left out: {name} alone" + (f", without {'; '.join(dropped)}" if dropped else "")
        return single.sql(dialect="duckdb"), note
    return None
