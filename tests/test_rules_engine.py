"""The stages the engine applies itself (`data/rules/engine_stages.py`): before a query runs and when
DuckDB rejects it, each rule on a general example (orders and customers), its bound, the tuples, and
the rule named in what the repair reports. The hints stage: tests/test_data_error_hints.py; each
rewrite in depth: tests/test_data_sql_repair.py, test_data_sql_dialects.py, test_data_sql_unwrap.py."""

from __future__ import annotations

import duckdb
import pytest

from datasolver.data.rules import (bare_columns, bracket_names, other_dialect, spaced_columns, text_values,
                                   unwrap_statement, widen_float_casts)
from datasolver.data.rules.engine_stages import BEFORE_RUN, ON_REJECT, apply_before_run
from datasolver.data.rules.protocol import KnownColumns
from datasolver.data.sql_repair import execute_with_repair

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

COLUMNS = ["order_id", "customer_id", "amount", "ship city", "status(code)"]
TEXT_COLUMNS = ["ship city", "status(code)"]


def _known() -> KnownColumns:
    return KnownColumns(lambda: COLUMNS, lambda: TEXT_COLUMNS)


def test_the_engine_stages_name_their_rules_in_the_order_applied() -> None:
    assert [r.__name__ for r in BEFORE_RUN] == ["unwrap_statement", "widen_float_casts"]
    assert [r.__name__ for r in ON_REJECT] == [
        "bracket_names", "bare_columns", "spaced_columns", "text_values", "other_dialect"]


def test_before_run_rules_on_an_orders_query_and_past_their_bound() -> None:
    fenced = "```sql\nSELECT amount::float FROM orders;\n```"
    assert apply_before_run(fenced) == ("SELECT amount::DOUBLE FROM orders", [
        "removed the Markdown code fence around the SQL",
        "cast to float widened to DOUBLE (PostgreSQL's float is 8 bytes, DuckDB's 4)"],
        ["unwrap_statement", "widen_float_casts"])
    assert apply_before_run("SELECT amount FROM orders") == ("SELECT amount FROM orders", [], [])
    for module, sql in ((unwrap_statement, fenced), (widen_float_casts, "SELECT amount::real FROM orders")):
        rule = getattr(module, module.__name__.rpartition(".")[2])
        padded = sql + " " * module.MAX_SQL_CHARS
        assert rule(sql)[1] != [] and rule(padded) == (padded, []), module.__name__


REJECTED = [
    (bracket_names, "SELECT [amount] FROM orders", 'SELECT "amount" FROM orders'),
    (bare_columns, "SELECT status(code) FROM orders", 'SELECT "status(code)" FROM orders'),
    (spaced_columns, 'SELECT "shipcity" FROM orders', 'SELECT "ship city" FROM orders'),
    (text_values, 'SELECT amount FROM orders WHERE "ship city" = "Lyon"',
     "SELECT amount FROM orders WHERE \"ship city\" = 'Lyon'"),
    (other_dialect, "SELECT TOP 2 amount FROM orders", "SELECT amount FROM orders LIMIT 2"),
]


@pytest.mark.parametrize(("module", "sql", "rewritten"), REJECTED, ids=[m.__name__ for m, _, _ in REJECTED])
def test_each_on_reject_rule_on_an_orders_query_and_past_its_bound(module, sql, rewritten) -> None:
    rule = getattr(module, module.__name__.rpartition(".")[2])
    assert rewritten in [candidate for candidate, _ in rule(sql, _known())]
    assert rule(sql + " " * module.MAX_SQL_CHARS, _known()) == []


def test_the_repair_names_the_rule_that_wrote_the_query_that_ran() -> None:
    with duckdb.connect() as con:
        con.execute('CREATE TABLE orders (order_id INT, amount INT, "ship city" VARCHAR)')
        con.execute("INSERT INTO orders VALUES (1, 5, 'Lyon'), (2, 7, 'Paris')")
        run = lambda sql: con.sql(sql).fetchall()  # noqa: E731
        columns = lambda: ["order_id", "amount", "ship city"]  # noqa: E731
        quoted = execute_with_repair('SELECT amount FROM orders WHERE "ship city" = "Lyon"', run, columns,
                                     lambda: ["ship city"])
        assert (quoted.value, quoted.rules) == ([(5,)], ["text_values"])
        top = execute_with_repair("SELECT TOP 1 [amount] FROM orders ORDER BY order_id", run, columns)
        assert (top.value, top.rules) == ([(5,)], ["other_dialect"])
        assert execute_with_repair("SELECT amount FROM orders WHERE order_id = 2", run, columns).rules == []


def test_columns_are_read_only_when_a_rule_needs_them() -> None:
    reads: list[str] = []
    known = KnownColumns(lambda: reads.append("names") or COLUMNS, lambda: reads.append("text") or TEXT_COLUMNS)
    assert bracket_names.bracket_names("SELECT [amount] FROM orders", known) and reads == []
    spaced_columns.spaced_columns("SELECT amount FROM orders", known)  # no double-quoted name: nothing read
    assert reads == []
    text_values.text_values('SELECT amount FROM orders WHERE "ship city" = "Lyon"', known)
    text_values.text_values('SELECT amount FROM orders WHERE "ship city" = "Paris"', known)
    assert reads == ["names", "text"]  # each read once
