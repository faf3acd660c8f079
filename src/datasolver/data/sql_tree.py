"""A query as a syntax tree: one DuckDB statement read by sqlglot, or None.

The one place that turns a query's text into a tree for the program's own reading and rewriting
(empty-result diagnosis, filter respelling, the rules of `rules/`). Bounded: a query longer than the
caller's `max_chars` is not parsed; parse errors, several statements and trees too deep to walk are
all None, never an exception.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp


def parse_statement(sql: str, max_chars: int | None = None) -> exp.Expression | None:
    """The one DuckDB statement `sql` holds, or None (unreadable, several statements, or longer than
    `max_chars`)."""
    if max_chars is not None and len(sql) > max_chars:
        return None
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    return trees[0] if len(trees) == 1 else None


def parse_select(sql: str, max_chars: int | None = None) -> exp.Select | None:
    """The one plain SELECT `sql` holds, or None (see `parse_statement`)."""
    tree = parse_statement(sql, max_chars)
    return tree if isinstance(tree, exp.Select) else None
