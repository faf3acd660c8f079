"""The stages: one tuple of named rules each, applied in order by one function per stage.

`ON_ERROR`: a query that failed, with its parsed DuckDB error. `ON_EMPTY`: a query whose filters
found nothing. `ON_ROWS`: a query that ran with rows (and passed its checks), with its result's shape
and the question's: what the question asks that the query does not answer. Every result carries the
name of the rule that made it, for the transcript. The stages the engine applies itself (before a
query runs, on its rejection, the hints of its error) are in `engine_stages.py`.
"""

from __future__ import annotations

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.context import OnEmpty, OnError, OnRows, ResultShape, Rewrite, RuleContext
from datasolver.data.rules.entity_union import entity_union
from datasolver.data.rules.group_by_column import group_by_column
from datasolver.data.rules.join_path import join_path
from datasolver.data.rules.link_table import link_table
from datasolver.data.rules.moved_column import moved_column
from datasolver.data.rules.nearest_value import nearest_value
from datasolver.data.rules.nested_aggregate import nested_aggregate
from datasolver.data.rules.one_table import one_table
from datasolver.data.rules.period_union import period_union
from datasolver.data.rules.respelled_column import respelled_column
from datasolver.data.rules.respelled_filter import respelled_filter
from datasolver.data.rules.unasked_filter import unasked_filter
from datasolver.data.rules.whole_column_name import whole_column_name

ON_ERROR: tuple[OnError, ...] = (whole_column_name, respelled_column, moved_column, join_path, link_table,
                                  nested_aggregate, group_by_column)
ON_EMPTY: tuple[OnEmpty, ...] = (respelled_filter, nearest_value, unasked_filter, one_table)
ON_ROWS: tuple[OnRows, ...] = (period_union, entity_union)


def apply_on_error(sql: str, error: DuckError, context: RuleContext) -> list[Rewrite]:
    """The rewrites of `sql`, a query that failed with `error`, in the order to try, each named by its rule."""
    return [Rewrite(new, reason, rule.__name__) for rule in ON_ERROR for new, reason in rule(sql, error, context)]


def apply_on_empty(sql: str, context: RuleContext) -> list[Rewrite]:
    """The rewrites of `sql`, a query whose filters found nothing, in the order to try, each named by its rule."""
    return [Rewrite(new, reason, rule.__name__) for rule in ON_EMPTY for new, reason in rule(sql, context)]


def apply_on_rows(sql: str, result: ResultShape, context: RuleContext) -> list[Rewrite]:
    """The rewrites of `sql`, a query that ran with rows (`result`), in the order to try, each named by its rule."""
    return [Rewrite(new, reason, rule.__name__) for rule in ON_ROWS for new, reason in rule(sql, result, context)]
