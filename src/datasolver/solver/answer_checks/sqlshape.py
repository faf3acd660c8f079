"""The shape of the final SQL, read with sqlglot: output columns, filters, ORDER BY … LIMIT.

Everything here is a pure function of the SQL text; SQL that sqlglot cannot read gives None and
the checks that need it stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

_RANK_FUNCTIONS = (exp.RowNumber, exp.Rank, exp.DenseRank, exp.Ntile, exp.PercentRank, exp.CumeDist)


@dataclass
class ParsedSql:
    """The final SQL as a tree, and its top-level SELECT (the left one of a set operation)."""

    sql: str
    tree: exp.Expression

    @property
    def top(self) -> exp.Select | None:
        node = self.tree
        while isinstance(node, exp.SetOperation):
            node = node.this
        return node if isinstance(node, exp.Select) else None

    def outputs(self) -> dict[str, exp.Expression]:
        """Output column name → its expression (aliases removed), for the top-level SELECT."""
        top = self.top
        if top is None:
            return {}
        out = {}
        for projection in top.expressions:
            name = projection.alias_or_name
            out[name] = projection.this if isinstance(projection, exp.Alias) else projection
        return out

    def is_source_column(self, name: str) -> bool:
        """True when output column `name` is a plain column of a table or CTE (copied, not computed)."""
        expr = self.outputs().get(name)
        return isinstance(expr, exp.Column)

    def is_rank_column(self, name: str) -> bool:
        """Output column `name` is a ROW_NUMBER()/RANK()…: computed in the SELECT list, or a
        column of that name that a CTE or subquery defines as one (`WITH r AS (… row_number()
        OVER (…) AS pos …) SELECT name, pos FROM r`)."""
        expr = self.outputs().get(name)
        if expr is not None and isinstance(_unwrap_window(expr), _RANK_FUNCTIONS):
            return True
        if expr is not None and not isinstance(expr, (exp.Column, exp.Star)):
            return False
        wanted = name.lower()
        return any(alias.alias.lower() == wanted and isinstance(_unwrap_window(alias.this), _RANK_FUNCTIONS)
                   for alias in self.tree.find_all(exp.Alias))

    def is_literal_column(self, name: str) -> bool:
        """Output column `name` is a constant typed into the top-level SELECT list (`'Paris' AS city`)."""
        expr = self.outputs().get(name)
        return isinstance(expr, exp.Literal)

    def is_null_literal(self, name: str) -> bool:
        """Output column `name` is a NULL typed into the top-level SELECT list (`CAST(NULL AS …)` too)."""
        expr = self.outputs().get(name)
        while isinstance(expr, (exp.Cast, exp.TryCast)):
            expr = expr.this
        return isinstance(expr, exp.Null)

    def repeats_by_union_all(self) -> bool:
        """The top level is a UNION ALL: its branches can repeat rows whatever their WHERE lists."""
        return isinstance(self.tree, exp.Union) and not self.tree.args.get("distinct")

    def equality_filters(self) -> list[tuple[str, str, exp.Expression]]:
        """(column name, literal text, the predicate) of every `column = literal` in a WHERE."""
        found = []
        for where in self.tree.find_all(exp.Where):
            for eq in where.find_all(exp.EQ):
                column, literal = _column_and_literal(eq)
                if column is not None and literal is not None:
                    found.append((column.name, literal.name, eq))
        return found

    def largest_value_list(self) -> int:
        """The longest literal list a WHERE pins one column to (`IN (…)` or `a = 1 OR a = 2`)."""
        best = 0
        for where in self.tree.find_all(exp.Where):
            for node in where.find_all(exp.In):
                values = node.expressions
                if values and all(isinstance(v, exp.Literal) for v in values):
                    best = max(best, len(values))
            for node in where.find_all(exp.Or):
                columns = set()
                parts = list(node.flatten())
                for part in parts:
                    column, literal = _column_and_literal(part) if isinstance(part, exp.EQ) else (None, None)
                    if column is None or literal is None:
                        columns = set()
                        break
                    columns.add(column.name)
                if len(columns) == 1:
                    best = max(best, len(parts))
        return best

    def top_limit(self) -> int | None:
        """k of the top-level `ORDER BY … LIMIT k` (a plain integer), else None."""
        top = self.top
        if top is None or top is not self.tree or not top.args.get("order") or not top.args.get("limit"):
            return None
        value = top.args["limit"].expression
        if isinstance(value, exp.Literal) and not value.is_string and value.name.isdigit():
            return int(value.name)
        return None

    def with_sort_keys(self, limit: int) -> tuple[str, int] | None:
        """The top-level SELECT with its ORDER BY keys appended as output columns, LIMIT `limit`."""
        top = self.top
        if top is None or top is not self.tree:
            return None
        tree = top.copy()
        outputs = self.outputs()
        keys = []
        for i, ordered in enumerate(tree.args["order"].expressions):
            key = ordered.this
            if isinstance(key, exp.Column) and not key.table and key.name in outputs:
                key = outputs[key.name]
            elif isinstance(key, exp.Literal) and key.name.isdigit() and 0 < int(key.name) <= len(top.expressions):
                projection = top.expressions[int(key.name) - 1]
                key = projection.this if isinstance(projection, exp.Alias) else projection
            keys.append(exp.alias_(key.copy(), f"__sort_key_{i}"))
        tree.set("expressions", tree.expressions + keys)
        tree.set("limit", exp.Limit(expression=exp.Literal.number(limit)))
        return tree.sql(dialect="duckdb"), len(keys)

    def order_sql(self) -> str:
        top = self.top
        order = top.args.get("order") if top is not None else None
        return order.sql(dialect="duckdb").removeprefix("ORDER BY ").strip() if order else ""

    def sorted_aggregates(self) -> list[str]:
        """Output columns that hold an aggregate and that the top-level ORDER BY sorts on."""
        top = self.top
        if top is None or not top.args.get("order"):
            return []
        order_keys = [o.this for o in top.args["order"].expressions]
        found = []
        for name, expr in self.outputs().items():
            if not expr.find(exp.AggFunc):
                continue
            for key in order_keys:
                if key == expr or (isinstance(key, exp.Column) and not key.table and key.name == name):
                    found.append(name)
                    break
        return found

    def rounding(self) -> list[tuple[str, int]]:
        """Rounding in any SELECT list: (the expression, decimals kept), for fewer than 2 decimals."""
        found = []
        for select in self.tree.find_all(exp.Select):
            for projection in select.expressions:
                for node in projection.walk():
                    kept = _decimals_kept(node)
                    if kept is not None and kept < 2:
                        found.append((node.sql(dialect="duckdb"), kept))
        return found


MAX_SQL_CHARS = 64 * 1024
"""Longest SQL read (sqlglot holds ~350 bytes per character: 3 MB of SQL took 1.2 GB and 40 s)."""
MAX_SQL_DEPTH = 32
"""Deepest nesting of parentheses read (sqlglot's parser recurses; 64 levels end in RecursionError)."""


def sql_refusal(sql: str) -> str | None:
    """Why `sql` is not read by the checks (too long, nested too deeply), or None."""
    if len(sql) > MAX_SQL_CHARS:
        return f"the final SQL is {len(sql):,} characters, over the {MAX_SQL_CHARS:,} the checks read"
    depth = deepest = 0
    for char in sql:
        if char == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")":
            depth -= 1
    if deepest > MAX_SQL_DEPTH:
        return f"the final SQL nests {deepest} parentheses deep, over the {MAX_SQL_DEPTH} the checks read"
    return None


def parse_sql(sql: str) -> ParsedSql | None:
    """The SQL parsed as DuckDB, or None when sqlglot cannot read it as one statement (or it is over
    the size and depth the checks read: `sql_refusal`)."""
    if sql_refusal(sql):
        return None
    try:
        trees = sqlglot.parse(sql, read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        return None
    return ParsedSql(sql, trees[0])


_INT_TYPES = {exp.DataType.Type.INT, exp.DataType.Type.BIGINT, exp.DataType.Type.SMALLINT,
              exp.DataType.Type.TINYINT, exp.DataType.Type.INT128}


def _decimals_kept(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Round):
        digits = node.args.get("decimals")
        if digits is None:
            return 0
        if isinstance(digits, exp.Literal) and not digits.is_string:
            try:
                return int(float(digits.name))
            except ValueError:
                return None
        if isinstance(digits, exp.Neg):
            return -1
        return None
    if isinstance(node, (exp.Floor, exp.Ceil)) and not node.args.get("decimals"):
        return 0
    if isinstance(node, exp.Cast) and node.to.this in _INT_TYPES:
        # Casting a text column to a number is a conversion; casting a computed value cuts decimals.
        operand = node.this
        if isinstance(operand, (exp.Column, exp.Literal)) or operand.find(exp.Column) is None:
            return None
        if not (operand.find(exp.Div) or operand.find(exp.Avg) or operand.find(exp.Mul)):
            return None
        return 0
    return None


def _unwrap_window(expr: exp.Expression) -> exp.Expression:
    return expr.this if isinstance(expr, exp.Window) else expr


def _column_and_literal(node: exp.Expression) -> tuple[exp.Column | None, exp.Literal | None]:
    if not isinstance(node, exp.EQ):
        return None, None
    left, right = node.this, node.expression
    if isinstance(left, exp.Literal):
        left, right = right, left
    if isinstance(left, exp.Column) and isinstance(right, exp.Literal):
        return left, right
    return None, None
