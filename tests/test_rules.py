"""The rules room: each rule on a general example (orders and customers), its bound, the stages'
tuples and the rule name every rewrite carries; docs/rules.md lists every rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data import Catalog, QueryError
from datasolver.data.duck_errors import DuckError, parse_duck_error
from datasolver.data.empty_result import explain_empty
from datasolver.data.linking import QuestionLinks, ValueHit
from datasolver.rules import moved_column, one_table, respelled_filter, whole_column_name
from datasolver.rules.protocol import RuleContext
from datasolver.rules.stages import HINTS, ON_EMPTY, ON_ERROR, apply_on_empty, apply_on_error
from tests.helpers.datafiles import write_task

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


@pytest.fixture()
def shop(tmp_path):
    task = write_task(tmp_path, "task_shop", "?", files={
        "csv/orders.csv": "order_id,customer_id,amount,ship_city\n1,10,5,Lyon\n2,11,7,Paris\n",
        "csv/customers.csv": "customer_id,customer_name,city\n10,Ann,Lyon\n11,Bob,Paris\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def _error(catalog: Catalog, sql: str) -> DuckError:
    with pytest.raises(QueryError) as info:
        catalog.query(sql)
    return parse_duck_error(str(info.value))


def test_whole_column_name_writes_the_column_whole_where_a_piece_of_it_did_not_parse(shop) -> None:
    sql = "SELECT GROUP city FROM orders"  # ship_city half translated: a syntax error at "city"
    error = _error(shop, sql)
    assert whole_column_name.whole_column_name(sql, error, RuleContext(shop)) == [
        ('SELECT "ship_city" FROM orders', 'the column name "ship_city" written whole for `GROUP city`')]
    assert whole_column_name.whole_column_name("SELECT city FROM customers", DuckError("x"), RuleContext(shop)) == []


def test_moved_column_takes_the_column_from_the_joined_table_that_has_it(shop) -> None:
    sql = "SELECT c.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    error = _error(shop, sql)
    assert moved_column.moved_column(sql, error, RuleContext(shop)) == [
        ("SELECT o.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id",
         "amount taken from orders, the query's table that has it")]
    # DuckDB's offer (its candidate binding in c) is taken, first, only when the question names that column
    sql = "SELECT c.ship_city FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    links = QuestionLinks("which city?", columns=(("customers", "city"),))
    rewrites = moved_column.moved_column(sql, _error(shop, sql), RuleContext(shop, links))
    assert [r.split(" FROM ")[0] for r, _ in rewrites] == ['SELECT c."city"', "SELECT o.ship_city"]


def test_respelled_filter_puts_in_the_value_the_question_linking_found(shop) -> None:
    links = QuestionLinks("orders shipped to lyon", values=(ValueHit("orders", "ship_city", "Lyon", "lyon", "case"),))
    sql = "SELECT count(*) FROM orders WHERE ship_city = 'lyon'"
    assert respelled_filter.respelled_filter(sql, RuleContext(shop, links)) == [
        ("SELECT COUNT(*) FROM orders WHERE ship_city = 'Lyon'",
         "the filter values the question names were put in (ship_city = 'lyon' → 'Lyon')")]
    assert respelled_filter.respelled_filter(sql, RuleContext(shop)) == []  # no links: nothing to put in


def test_one_table_answers_a_join_that_pairs_nothing_from_the_table_that_holds_the_columns(shop) -> None:
    sql = ("SELECT o.amount FROM orders AS o JOIN customers AS c ON o.ship_city = c.customer_name "
           "WHERE o.ship_city = 'Lyon'")
    diagnosis = explain_empty(shop, sql)
    assert diagnosis.join_pairs_nothing
    rewrites = one_table.one_table(sql, RuleContext(shop, diagnosis=diagnosis))
    assert len(rewrites) == 1 and shop.query(rewrites[0][0]).rows == [(5,)]
    assert one_table.one_table(sql, RuleContext(shop)) == []  # no diagnosis: no rewrite


def test_each_rule_holds_to_its_bound_on_the_query_text(shop) -> None:
    # each query gets its rewrite as written, and none once padded past the rule's bound
    join = "FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    piece, moved = "SELECT GROUP city FROM orders", f"SELECT c.amount {join}"
    filtered = "SELECT amount FROM orders WHERE ship_city = 'lyon'"
    paired = ("SELECT o.amount FROM orders AS o JOIN customers AS c ON o.ship_city = c.customer_name "
              "WHERE o.ship_city = 'Lyon'")
    links = QuestionLinks("q", values=(ValueHit("orders", "ship_city", "Lyon", "lyon", "case"),))
    cases = [(whole_column_name, lambda sql: whole_column_name.whole_column_name(sql, _error(shop, piece), RuleContext(shop)), piece),
             (moved_column, lambda sql: moved_column.moved_column(sql, _error(shop, moved), RuleContext(shop)), moved),
             (respelled_filter, lambda sql: respelled_filter.respelled_filter(sql, RuleContext(shop, links)), filtered),
             (one_table, lambda sql: one_table.one_table(sql, RuleContext(shop, diagnosis=explain_empty(shop, paired))), paired)]
    for module, rule, sql in cases:
        padded = sql + " " * module.MAX_SQL_CHARS
        assert rule(sql) != [] and rule(padded) == [], module.__name__


def test_whole_column_name_tries_at_most_its_bound_of_columns(tmp_path) -> None:
    header = ",".join(f"sale_{i}" for i in range(whole_column_name.SPLIT_COLUMNS_TRIED + 3))
    task = write_task(tmp_path, "task_wide", "?", files={"csv/t.csv": header + "\n" + ",".join("1" * 6) + "\n"})
    with Catalog.open(task) as catalog:
        sql = "SELECT GROUP sale FROM t"
        found = whole_column_name.whole_column_name(sql, _error(catalog, sql), RuleContext(catalog))
        assert {c for _, how in found for c in [how.split('"')[1]]} == {
            f"sale_{i}" for i in range(whole_column_name.SPLIT_COLUMNS_TRIED)}


def test_a_stage_applies_its_rules_in_order_and_names_each_rewrite(shop) -> None:
    sql = "SELECT c.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    rewrites = apply_on_error(sql, _error(shop, sql), RuleContext(shop))
    assert [(r.rule, r.sql.split(" FROM ")[0]) for r in rewrites] == [("moved_column", "SELECT o.amount")]
    links = QuestionLinks("q", values=(ValueHit("orders", "ship_city", "Lyon", "lyon", "case"),))
    empty = apply_on_empty("SELECT amount FROM orders WHERE ship_city = 'lyon'", RuleContext(shop, links))
    assert [r.rule for r in empty] == ["respelled_filter"]
    assert [r.__name__ for r in ON_ERROR] == ["whole_column_name", "moved_column"]
    assert [r.__name__ for r in ON_EMPTY] == ["respelled_filter", "one_table"]


def test_docs_rules_lists_every_rule_of_every_stage() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [rule.__name__ for stage in (ON_ERROR, ON_EMPTY, HINTS) for rule in stage
               if f"`{rule.__name__}`" not in text]
    assert missing == []
