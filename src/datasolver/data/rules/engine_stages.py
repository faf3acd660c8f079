"""The stages the engine applies itself, one tuple of named rules each (the shape: `protocol.py`).

`BEFORE_RUN`: what is done to every query before its first run (`Catalog._run`, `apply_before_run`).
`ON_REJECT`: the rewrites of a query DuckDB rejected, tried in order at the execution boundary until
one executes (`data/sql_repair.execute_with_repair`). `HINTS`: the text the engine adds to a failed
query's error (`data/query_errors.query_error`). The engine applies them so that every caller gets
them, solver.py in the sandbox included, which imports only `datasolver.data`. What each stage does is
named by its rules: the names reach the repair's outcome (`RepairOutcome.rules`). The stages that read
the task are in `stages.py`; none of them is imported here, since the catalog imports this module.
"""

from __future__ import annotations

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.bare_columns import bare_columns
from datasolver.data.rules.bracket_names import bracket_names
from datasolver.data.rules.column_home import column_home
from datasolver.data.rules.column_piece import column_piece
from datasolver.data.rules.other_dialect import other_dialect
from datasolver.data.rules.protocol import BeforeRun, HintRule, OnReject, Schema
from datasolver.data.rules.quoted_value import quoted_value
from datasolver.data.rules.spaced_columns import spaced_columns
from datasolver.data.rules.text_values import text_values
from datasolver.data.rules.unwrap_statement import unwrap_statement
from datasolver.data.rules.widen_float_casts import widen_float_casts

BEFORE_RUN: tuple[BeforeRun, ...] = (unwrap_statement, widen_float_casts)
ON_REJECT: tuple[OnReject, ...] = (bracket_names, bare_columns, spaced_columns, text_values, other_dialect)
HINTS: tuple[HintRule, ...] = (quoted_value, column_home, column_piece)


def apply_before_run(sql: str) -> tuple[str, list[str], list[str]]:
    """`sql` as the rules of `BEFORE_RUN` leave it, each given what the one before it left, with their
    notes on what changed and the names of the rules that changed it."""
    notes: list[str] = []
    rules: list[str] = []
    for rule in BEFORE_RUN:
        sql, said = rule(sql)
        if said:
            notes += said
            rules.append(rule.__name__)
    return sql, notes, rules


def error_hints(error: DuckError, sql: str, schema: Schema) -> str:
    """The hints of `HINTS` for a failed query, in order, each starting with a space ("" when none)."""
    return "".join(hint(error, sql, schema) for hint in HINTS)
