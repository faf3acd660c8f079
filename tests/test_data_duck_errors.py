"""parse_duck_error on real DuckDB messages, made here by running failing queries on an in-memory
DuckDB: a DuckDB upgrade that changes a message's wording fails this test."""

from __future__ import annotations

import duckdb
import pytest

from datasolver.data.duck_errors import MAX_CANDIDATES, MAX_PARSED_CHARS, DuckError, compact_error, parse_duck_error

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    connection.execute('CREATE TABLE orders (order_id INT, "customer name" VARCHAR, amount INT)')
    connection.execute("CREATE TABLE customers (customer_id INT, city VARCHAR)")
    yield connection
    connection.close()


def _error(con, sql: str) -> duckdb.Error:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql)
    return info.value


# (query, the facts DuckDB's message gives: field → value)
CASES = [
    ("SELECT c.amount FROM orders AS o JOIN customers AS c ON o.order_id = c.customer_id",
     {"kind": "Binder", "missing_column": "amount", "qualifier": "c", "candidates": ("city",), "line": 1}),
    ("SELECT amout FROM orders",
     {"kind": "Binder", "missing_column": "amout", "qualifier": None, "candidates": ("amount", "customer name")}),
    ("SELECT * FROM order_lines",
     {"kind": "Catalog", "missing_table": "order_lines", "missing_column": None}),
    ("SELECT GROUP name FROM orders",
     {"kind": "Parser", "near": "name", "missing_column": None, "line": 1, "column": 13}),
    ("SELECT CAST('ten' AS INTEGER)",
     {"kind": "Conversion", "missing_column": None, "missing_table": None, "near": None, "nested_aggregate": False}),
    ("SELECT SUM(CASE WHEN COUNT(order_id) > 1 THEN 1 ELSE 0 END) FROM orders",
     {"kind": "Binder", "nested_aggregate": True, "missing_column": None}),
    ("SELECT o.order_id, o.amount, COUNT(*) FROM orders AS o GROUP BY o.order_id",  # DuckDB names it bare
     {"kind": "Binder", "ungrouped_column": "amount", "missing_column": None, "nested_aggregate": False}),
    ('SELECT "customer name", SUM(amount) FROM orders',  # aggregates and no GROUP BY
     {"kind": "Binder", "ungrouped_column": "customer name"}),
    ("SELECT order_id, SUM(amount) FROM orders GROUP BY order_id HAVING amount > 1",  # HAVING: DuckDB words it otherwise
     {"kind": "Binder", "ungrouped_column": "amount"}),
    ("SELECT amout FROM orders", {"ungrouped_column": None}),
]


@pytest.mark.parametrize(("sql", "facts"), CASES)
def test_a_real_duckdb_message_is_parsed_into_its_facts(con, sql: str, facts: dict) -> None:
    exc = _error(con, sql)
    parsed = parse_duck_error(exc)
    assert {name: getattr(parsed, name) for name in facts} == facts
    assert parsed.message == str(exc)
    # the one-line form shown to the model keeps the same facts (all but the echo's position)
    shown = parse_duck_error(compact_error(exc, sql))
    kept = {name: value for name, value in facts.items() if name not in ("line", "column")}
    assert {name: getattr(shown, name) for name in kept} == kept


def test_the_engines_error_line_after_its_class_name_keeps_the_kind(con) -> None:
    exc = _error(con, "SELECT amout FROM orders")
    assert parse_duck_error(f"QueryError: {compact_error(exc)}").kind == "Binder"


def test_a_message_that_is_no_duckdb_error_gives_only_its_text() -> None:
    assert parse_duck_error("connection reset") == DuckError("connection reset")


def test_the_parse_is_bounded_in_text_and_candidates() -> None:
    many = ", ".join(f'"c{i}"' for i in range(MAX_CANDIDATES + 20))
    message = f'Binder Error: Referenced column "x" not found in FROM clause!\nCandidate bindings: {many}'
    parsed = parse_duck_error(message + " " * (2 * MAX_PARSED_CHARS))
    assert len(parsed.candidates) == MAX_CANDIDATES and parsed.candidates[0] == "c0"
    assert len(parsed.message) == MAX_PARSED_CHARS
    late = parse_duck_error("x" * MAX_PARSED_CHARS + 'Referenced column "y" not found')
    assert late.missing_column is None  # past the bound: not read
