"""The rulebook's stages that read the task: each rule on a general example (orders and customers), its
bound, the stages' tuples and the rule name every rewrite carries; docs/rules.md lists every rule of
every stage (the engine's own too: tests/test_rules_engine.py) and every linking signal."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data import Catalog, QueryError
from datasolver.data.duck_errors import DuckError, parse_duck_error
from datasolver.data.empty_result import explain_empty
from datasolver.data.linking import QuestionLinks, ValueHit, link_question
from datasolver.data.question_shape import read_question
from datasolver.data.rules import (entity_union, group_by_column, join_path, link_table, moved_column, nearest_value, nested_aggregate,
                                   one_table, period_union, respelled_column, respelled_filter, unasked_filter,
                                   whole_column_name)
from datasolver.data.rules.context import ResultShape, RuleContext
from datasolver.data.rules.engine_stages import BEFORE_RUN, HINTS, ON_REJECT
from datasolver.data.rules.link_signals import LINK_SIGNALS
from datasolver.data.rules.look_alikes import differing_piece
from datasolver.data.rules.stages import ON_EMPTY, ON_ERROR, ON_ROWS, apply_on_empty, apply_on_error, apply_on_rows
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

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


@pytest.fixture()
def camel(tmp_path):
    """Columns in CamelCase: a model writes them in snake_case."""
    task = write_task(tmp_path, "task_camel", "?", files={
        "csv/orders.csv": "OrderID,CustomerID,Amount\n1,10,5\n2,11,7\n3,10,2\n",
        "csv/customers.csv": "CustomerID,CustomerName,Order Note\n10,Ann,x\n11,Bob,y\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def test_respelled_column_writes_each_column_as_its_table_spells_it_from_the_table_that_has_it(camel) -> None:
    sql = ("SELECT c.customer_name, SUM(c.amount) AS total FROM orders AS o JOIN customers AS c "
           "ON o.customer_id = c.customer_id GROUP BY c.customer_name ORDER BY total")
    [(rewritten, how)] = respelled_column.respelled_column(sql, _error(camel, sql), RuleContext(camel))
    assert rewritten == ('SELECT "c"."CustomerName", SUM("o"."Amount") AS total FROM orders AS o JOIN customers AS c '
                         'ON "o"."CustomerID" = "c"."CustomerID" GROUP BY "c"."CustomerName" ORDER BY total')
    assert how == ("columns as the tables spell them: c.customer_name → c.CustomerName, c.amount → o.Amount, "
                   "o.customer_id → o.CustomerID, c.customer_id → c.CustomerID")
    assert sorted(camel.query(rewritten).rows) == [("Ann", 7), ("Bob", 7)]
    # bare, in a one-table query: left bare (amount binds as written: DuckDB ignores case); a space is a separator too
    sql = "SELECT order_id FROM orders WHERE amount > 4"
    assert respelled_column.respelled_column(sql, _error(camel, sql), RuleContext(camel))[0][0] == (
        'SELECT "OrderID" FROM orders WHERE amount > 4')
    sql = "SELECT order_note FROM customers"
    assert camel.query(respelled_column.respelled_column(sql, _error(camel, sql), RuleContext(camel))[0][0]).rows == [
        ("x",), ("y",)]


def test_respelled_column_leaves_a_name_spelt_by_no_column_or_by_several(camel, tmp_path) -> None:
    sql = "SELECT c.customer_city FROM customers AS c"
    assert respelled_column.respelled_column(sql, _error(camel, sql), RuleContext(camel)) == []
    sql = "SELECT c.Amount FROM orders AS o JOIN customers AS c ON o.CustomerID = c.CustomerID"  # moved_column's
    assert respelled_column.respelled_column(sql, _error(camel, sql), RuleContext(camel)) == []
    # customer_id is in both tables: bare, it is ambiguous
    sql = "SELECT customer_id, customer_name FROM orders AS o JOIN customers AS c ON o.OrderID = c.CustomerID"
    assert respelled_column.respelled_column(sql, parse_duck_error('Referenced column "customer_id" not found'),
                                             RuleContext(camel)) == []
    task = write_task(tmp_path, "task_twice", "?", files={"csv/t.csv": "order_date,OrderDate\n1,2\n"})
    with Catalog.open(task) as catalog:
        sql = "SELECT orderdate_ FROM t"
        assert respelled_column.respelled_column(sql, _error(catalog, sql), RuleContext(catalog)) == []


@pytest.fixture()
def chain(tmp_path):
    """orders → customers → regions by key, and a look-alike key (notes.customer_id) whose values match none."""
    task = write_task(tmp_path, "task_chain", "?", files={
        "csv/orders.csv": "order_id,customer_id,amount\n1,10,5\n2,11,7\n3,10,2\n",
        "csv/customers.csv": "customer_id,customer_name,region_id\n10,Ann,1\n11,Bob,2\n",
        "csv/regions.csv": "region_id,region_name,zone_id\n1,North,7\n2,South,7\n",
        "csv/zones.csv": "zone_id,zone_name\n7,Europe\n",
        "csv/notes.csv": "note_id,customer_id,note_text\n1,98,x\n2,99,y\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def test_join_path_writes_the_join_to_the_table_one_key_away(chain) -> None:
    sql = "SELECT customer_name, sum(amount) AS total FROM orders GROUP BY customer_name ORDER BY total"
    [(rewritten, how)] = join_path.join_path(sql, _error(chain, sql), RuleContext(chain))
    assert 'JOIN "customers" AS j1 ON "orders"."customer_id" = j1."customer_id"' in rewritten
    assert how == "customer_name taken from customers, joined by key: orders → customers (on customer_id = customer_id)"
    assert sorted(chain.query(rewritten).rows) == [("Ann", 7), ("Bob", 7)]


def test_join_path_points_every_column_only_the_joined_table_has_and_leaves_output_names(chain) -> None:
    sql = "SELECT customer_name, region_id, sum(amount) AS total FROM orders GROUP BY 1, 2 ORDER BY total, region_id"
    [(rewritten, _)] = join_path.join_path(sql, _error(chain, sql), RuleContext(chain))
    assert sorted(chain.query(rewritten).rows) == [("Ann", 1, 7), ("Bob", 2, 7)]
    assert rewritten.endswith("ORDER BY total, \"j1\".\"region_id\"")


def test_join_path_takes_two_keys_and_keeps_the_alias_the_error_names(chain) -> None:
    sql = "SELECT o.order_id, o.region_name FROM orders AS o WHERE o.amount > 4"
    [(rewritten, how)] = join_path.join_path(sql, _error(chain, sql), RuleContext(chain))
    assert how.endswith("orders → customers (on customer_id = customer_id) → regions (on region_id = region_id)")
    assert sorted(chain.query(rewritten).rows) == [(1, "North"), (2, "South")]


def test_join_path_points_the_column_under_every_alias_of_the_query_that_lacks_it(chain) -> None:
    # DuckDB names one alias's region_name; the other's fails next unless it is pointed at the joined table too
    sql = ("SELECT o.region_name, sum(o.amount) AS total FROM orders AS o JOIN customers AS c "
           "ON o.customer_id = c.customer_id WHERE c.region_name = 'North' GROUP BY o.region_name")
    [(rewritten, _)] = join_path.join_path(sql, _error(chain, sql), RuleContext(chain))
    assert "o.region_name" not in rewritten and "c.region_name" not in rewritten
    assert chain.query(rewritten).rows == [("North", 7)]


def test_join_path_needs_the_key_values_to_overlap_and_a_short_path(chain) -> None:
    sql = "SELECT o.note_text FROM orders AS o"  # notes.customer_id holds none of the orders' keys
    assert join_path.join_path(sql, _error(chain, sql), RuleContext(chain)) == []
    sql = "SELECT c.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    assert join_path.join_path(sql, _error(chain, sql), RuleContext(chain)) == []  # moved_column's case
    assert join_path.join_path("SELECT 1", DuckError("x"), RuleContext(chain)) == []
    sql = "SELECT zone_name FROM orders"  # three keys away: past MAX_HOPS
    assert join_path.MAX_HOPS == 2 and join_path.join_path(sql, _error(chain, sql), RuleContext(chain)) == []
    sql = "SELECT zone_name FROM customers"  # two keys away
    assert chain.query(join_path.join_path(sql, _error(chain, sql), RuleContext(chain))[0][0]).rows == [("Europe",)] * 2


def test_join_path_prefers_a_key_to_a_shared_measure_whose_values_overlap_by_chance(tmp_path) -> None:
    task = write_task(tmp_path, "task_reviews", "?", files={
        "csv/reviews.csv": "review_id,business_id,rating\n1,20,5\n2,21,4\n3,22,5\n",  # 22: no business
        "csv/businesses.csv": "business_id,business_name,rating\n20,Deli,4\n21,Cafe,5\n"})
    with Catalog.open(task) as catalog:
        sql = "SELECT review_id, business_name FROM reviews"
        [(rewritten, how)] = join_path.join_path(sql, _error(catalog, sql), RuleContext(catalog))
        assert how.endswith("(on business_id = business_id)")
        assert sorted(catalog.query(rewritten).rows) == [(1, "Deli"), (2, "Cafe")]


def test_join_path_considers_at_most_its_bound_of_tables(tmp_path, monkeypatch) -> None:
    # the query's table and TABLES_CONSIDERED others before the column's home in catalog order
    files = {f"csv/a{i:02d}.csv": "k,v\n1,2\n" for i in range(join_path.TABLES_CONSIDERED + 1)}
    files["csv/zz_home.csv"] = "k,label\n1,x\n"
    task = write_task(tmp_path, "task_many", "?", files=files)
    with Catalog.open(task) as catalog:
        sql = "SELECT label FROM a00"
        assert join_path.join_path(sql, _error(catalog, sql), RuleContext(catalog)) == []
        monkeypatch.setattr(join_path, "TABLES_CONSIDERED", join_path.TABLES_CONSIDERED + 1)
        [(rewritten, _)] = join_path.join_path(sql, _error(catalog, sql), RuleContext(catalog))
        assert catalog.query(rewritten).rows == [("x",)]


@pytest.fixture()
def linked(tmp_path):
    """orders and products, linked by order_items (order_id, product_id); notes.order_id matches no order."""
    task = write_task(tmp_path, "task_items", "?", files={
        "csv/orders.csv": "order_id,customer_id\n1,10\n2,11\n",
        "csv/products.csv": "product_id,product_name,price\n5,Pen,2\n6,Ink,9\n",
        "csv/notes.csv": "order_id,note_id\n98,1\n99,2\n",
        "csv/order_items.csv": "order_id,product_id,quantity\n1,5,3\n1,6,1\n2,6,4\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def test_link_table_joins_through_the_table_that_holds_both_keys(linked) -> None:
    # products has no order_id: the model skipped the link table, and the quantity it reads is there too
    sql = ("SELECT o.customer_id, p.product_name, p.quantity FROM orders AS o JOIN products AS p "
           "ON o.order_id = p.order_id")
    error = _error(linked, sql)
    [(rewritten, how)] = link_table.link_table(sql, error, RuleContext(linked))
    assert rewritten == ('SELECT o.customer_id, p.product_name, "j1"."quantity" FROM orders AS o '
                         'JOIN "order_items" AS j1 ON "o"."order_id" = j1."order_id" '
                         'JOIN products AS p ON j1."product_id" = "p"."product_id"')
    assert how == "products has no order_id: joined through order_items (on order_id = order_id, then product_id = product_id)"
    assert sorted(linked.query(rewritten).rows) == [(10, "Ink", 1), (10, "Pen", 3), (11, "Ink", 4)]
    # moved_column no longer compares o.order_id with itself (a cross join)
    assert moved_column.moved_column(sql, error, RuleContext(linked)) == []
    # the side that lacks the key read first: the link table joins it, the held join the other side
    sql = "SELECT p.product_name FROM products AS p LEFT JOIN orders AS o ON p.order_id = o.order_id WHERE o.customer_id = 11"
    [(rewritten, _)] = link_table.link_table(sql, _error(linked, sql), RuleContext(linked))
    assert 'LEFT JOIN "order_items" AS j1 ON j1."product_id" = "p"."product_id"' in rewritten
    assert linked.query(rewritten).rows == [("Ink",)]


def test_link_table_leaves_a_join_no_table_links_or_that_is_not_one_equality(linked) -> None:
    cases = ["SELECT p.product_name FROM orders AS o JOIN products AS p ON o.order_id = p.order_id AND o.customer_id > 0",
             "SELECT n.note_id FROM products AS p JOIN notes AS n ON p.product_id = n.product_id",  # nothing links them
             "SELECT p.order_id FROM orders AS o JOIN products AS p ON o.order_id = p.product_id"]  # not in the ON
    for sql in cases:
        assert link_table.link_table(sql, _error(linked, sql), RuleContext(linked)) == [], sql
    assert link_table.link_table("SELECT 1", DuckError("x"), RuleContext(linked)) == []


def test_link_table_holds_to_its_bounds(linked, monkeypatch) -> None:
    sql = "SELECT p.product_name FROM orders AS o JOIN products AS p ON o.order_id = p.order_id"
    error = _error(linked, sql)
    assert link_table.link_table(sql + " " * link_table.MAX_SQL_CHARS, error, RuleContext(linked)) == []
    monkeypatch.setattr(link_table, "TABLES_CONSIDERED", 2)  # notes and order_items, in catalog order: the link is 2nd
    assert len(link_table.link_table(sql, error, RuleContext(linked))) == 1
    monkeypatch.setattr(link_table, "TABLES_CONSIDERED", 1)
    assert link_table.link_table(sql, error, RuleContext(linked)) == []
    monkeypatch.setattr(link_table, "TABLES_CONSIDERED", 40)
    monkeypatch.setattr(link_table, "LINKS_WRITTEN", 0)
    assert link_table.link_table(sql, error, RuleContext(linked)) == []


def test_nested_aggregate_counts_per_key_in_a_subquery_and_aggregates_over_it(chain) -> None:
    # customers with more than one order, as a share of the customers: the model nests COUNT in SUM
    sql = ("SELECT CAST(SUM(CASE WHEN COUNT(order_id) > 1 THEN 1 ELSE 0 END) AS REAL) / COUNT(customer_id) AS share "
           "FROM orders WHERE amount > 1")
    error = _error(chain, sql)
    assert error.nested_aggregate
    [(rewritten, how)] = nested_aggregate.nested_aggregate(sql, error, RuleContext(chain))
    assert rewritten == ('SELECT CAST(SUM(CASE WHEN nested_1 > 1 THEN 1 ELSE 0 END) AS REAL) / COUNT(customer_id) AS share '
                         'FROM (SELECT "customer_id", COUNT(order_id) AS nested_1 FROM orders WHERE amount > 1 '
                         'GROUP BY "customer_id") AS "orders"')
    assert how == ("the inner aggregate COUNT(order_id) computed per customer_id of orders in a subquery, "
                   "the outer aggregates over its rows")
    assert chain.query(rewritten).rows == [(0.5,)]
    # an alias stays the subquery's name (its qualified columns still bind); the same inner aggregate twice is one
    sql = "SELECT MAX(COUNT(*)) AS most, MIN(COUNT(*)) FROM orders AS o WHERE o.amount > 1"
    [(rewritten, _)] = nested_aggregate.nested_aggregate(sql, _error(chain, sql), RuleContext(chain))
    assert rewritten.count("COUNT(*)") == 1 and chain.query(rewritten).rows == [(2, 1)]


def test_nested_aggregate_leaves_what_it_cannot_read_as_a_count_per_key(chain) -> None:
    nested = parse_duck_error("Binder Error: aggregate function calls cannot be nested")
    cases = ["SELECT COUNT(CASE WHEN COUNT(order_id) > 1 THEN 1 END) / COUNT(order_id) FROM orders",  # outer reads it
             "SELECT SUM(COUNT(order_id)) FROM orders GROUP BY customer_id",  # grouped already
             "SELECT SUM(COUNT(o.order_id)) FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id",
             "SELECT SUM(COUNT(nothing)) FROM orders",  # no such column
             "SELECT SUM(COUNT(note_id)) FROM notes"]  # note_id is the only key, one value per row
    for sql in cases:
        assert nested_aggregate.nested_aggregate(sql, nested, RuleContext(chain)) == [], sql
    assert nested_aggregate.nested_aggregate("SELECT SUM(COUNT(order_id)) FROM orders", DuckError("x"),
                                             RuleContext(chain)) == []


def test_nested_aggregate_tries_the_key_the_question_links_first_and_at_most_its_bound(tmp_path, monkeypatch) -> None:
    task = write_task(tmp_path, "task_visits", "?", files={
        "csv/visits.csv": "visit_id,store_id,customer_id\n1,1,10\n2,1,10\n3,2,11\n4,2,10\n"})
    with Catalog.open(task) as catalog:
        sql = "SELECT AVG(COUNT(visit_id)) FROM visits"
        keys = lambda context: [how.split(" per ")[1].split(" of ")[0]  # noqa: E731
                                for _, how in nested_aggregate.nested_aggregate(sql, _error(catalog, sql), context)]
        assert keys(RuleContext(catalog)) == ["store_id", "customer_id"]
        padded = sql + " " * nested_aggregate.MAX_SQL_CHARS  # the query text past its bound: left alone
        assert nested_aggregate.nested_aggregate(padded, _error(catalog, sql), RuleContext(catalog)) == []
        assert keys(RuleContext(catalog, QuestionLinks("per customer", columns=(("visits", "customer_id"),)))) == [
            "customer_id", "store_id"]
        monkeypatch.setattr(nested_aggregate, "KEYS_TRIED", 1)
        assert keys(RuleContext(catalog)) == ["store_id"]
        monkeypatch.setattr(nested_aggregate, "KEYS_CONSIDERED", 1)  # visit_id first: one value per row, passed over
        monkeypatch.setattr(nested_aggregate, "KEYS_TRIED", 2)
        assert keys(RuleContext(catalog)) == ["store_id"]


def test_respelled_filter_puts_in_the_value_the_question_linking_found(shop) -> None:
    links = QuestionLinks("orders shipped to lyon", values=(ValueHit("orders", "ship_city", "Lyon", "lyon", "case"),))
    sql = "SELECT count(*) FROM orders WHERE ship_city = 'lyon'"
    assert respelled_filter.respelled_filter(sql, RuleContext(shop, links)) == [
        ("SELECT COUNT(*) FROM orders WHERE ship_city = 'Lyon'",
         "the filter values the question names were put in (ship_city = 'lyon' → 'Lyon')")]
    assert respelled_filter.respelled_filter(sql, RuleContext(shop)) == []  # no links: nothing to put in


def test_nearest_value_puts_in_the_existing_value_spelt_otherwise(shop) -> None:
    sql = "SELECT sum(amount) FROM orders WHERE ship_city = 'LYON.' AND amount > 1"
    diagnosis = explain_empty(shop, sql)
    [(rewritten, how)] = nearest_value.nearest_value(sql, RuleContext(shop, diagnosis=diagnosis))
    assert "ship_city = 'Lyon'" in rewritten and shop.query(rewritten).rows == [(5,)]
    assert how == "`ship_city = 'LYON.'` matched nothing; the data writes 'Lyon'"
    far = "SELECT sum(amount) FROM orders WHERE ship_city = 'Berlin'"  # nearest values are other cities
    assert nearest_value.nearest_value(far, RuleContext(shop, diagnosis=explain_empty(shop, far))) == []
    assert nearest_value.same_value("2022-07", "2022年07月") and not nearest_value.same_value("12", "Unit 12b")


def test_unasked_filter_drops_a_filter_the_question_never_named(shop) -> None:
    sql = "SELECT count(*) FROM orders WHERE ship_city = 'Lyon' AND amount > 100"
    diagnosis = explain_empty(shop, sql)
    unasked = QuestionLinks("how many orders went to Lyon?")
    [(rewritten, how)] = unasked_filter.unasked_filter(sql, RuleContext(shop, unasked, diagnosis))
    assert shop.query(rewritten).rows == [(1,)] and how.startswith("`amount > 100` matched nothing")
    for links in (QuestionLinks("how many orders to Lyon above 100?"),  # the question writes the value
                  QuestionLinks("orders to Lyon by amount", columns=(("orders", "amount"),))):  # names the column
        assert unasked_filter.unasked_filter(sql, RuleContext(shop, links, diagnosis)) == []
    assert unasked_filter.unasked_filter(sql, RuleContext(shop, diagnosis=diagnosis)) == []  # no links
    # a date the question writes otherwise is asked for: `2020-12` for "December 2020" (2020年12月)
    assert unasked_filter.asked("month = '2020-12'", QuestionLinks("orders of 2020年12月"))
    assert not unasked_filter.asked("month = '2020-12'", QuestionLinks("orders of 2021"))


def test_unasked_filter_drops_unasked_filters_together_when_none_alone_brings_rows_back(shop) -> None:
    # an invented customer, both halves of the name: each alone still matches nothing
    sql = "SELECT o.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id " \
          "WHERE c.customer_name = 'Eve' AND c.city = 'Rome'"
    diagnosis = explain_empty(shop, sql)
    assert diagnosis.brings_rows_back == []
    [(rewritten, how)] = unasked_filter.unasked_filter(sql, RuleContext(shop, QuestionLinks("which amounts?"), diagnosis))
    assert sorted(shop.query(rewritten).rows) == [(5,), (7,)]
    assert how == ("`c.customer_name = 'Eve'`, `c.city = 'Rome'` matched nothing, none alone brought rows back, "
                   "and the question names none of them: dropped together")
    # one of them asked for: the other alone is not dropped (it brings no rows back by itself)
    assert unasked_filter.unasked_filter(sql, RuleContext(shop, QuestionLinks("which amounts in Rome?"), diagnosis)) == []
    # more unasked filters than FILTERS_TRIED: left as they are
    many = sql + " AND c.customer_id > 50 AND o.order_id > 50"
    assert unasked_filter.unasked_filter(many, RuleContext(shop, QuestionLinks("which?"), explain_empty(shop, many))) == []


def test_unasked_filter_keeps_a_number_when_the_question_states_one_in_other_units(shop) -> None:
    # "over half a million" / "超过50万" over amounts kept in millions: the model's `amount > 500000`
    # empties the result, but the question asks for a threshold, so the filter is not dropped.
    sql = "SELECT count(*) FROM orders WHERE amount > 500000"
    diagnosis = explain_empty(shop, sql)
    assert [p.condition for p in diagnosis.brings_rows_back] == ["amount > 500000"]
    for question in ("how many orders were over 0.5 million?", "金额超过50万的订单有多少？", "金额超过五十万的订单有多少？"):
        assert unasked_filter.unasked_filter(sql, RuleContext(shop, QuestionLinks(question), diagnosis)) == []
    # with no number of its own in the question, the invented threshold is still dropped
    [(rewritten, _)] = unasked_filter.unasked_filter(sql, RuleContext(shop, QuestionLinks("how many orders?"), diagnosis))
    assert "500000" not in rewritten


def test_unasked_filter_drops_a_having_threshold_no_group_reaches_when_the_question_states_none(sales) -> None:
    sql = "SELECT customer_name, SUM(amount) FROM orders GROUP BY customer_name HAVING SUM(amount) > 5000"
    diagnosis = explain_empty(sales, sql)
    assert [p.condition for p in diagnosis.having_empties] == ["SUM(amount) > 5000"]
    [(rewritten, how)] = unasked_filter.unasked_filter(sql, RuleContext(sales, QuestionLinks("who are the big buyers?"),
                                                                        diagnosis))
    assert rewritten == "SELECT customer_name, SUM(amount) FROM orders GROUP BY customer_name"
    assert how == ("HAVING `SUM(amount) > 5000` kept none of the 2 groups (SUM(amount) across the groups: at most 12) "
                   "and the question does not name it: dropped")
    for links in (QuestionLinks("customers who spent over 5000"),  # the question writes the value
                  QuestionLinks("customers with more than 5 thousand"),  # a number of its own, maybe in other units
                  QuestionLinks("big buyers by amount", columns=(("orders", "amount"),))):  # names what it sums
        assert unasked_filter.unasked_filter(sql, RuleContext(sales, links, diagnosis)) == []
    assert unasked_filter.having_asked("total > 5000", QuestionLinks("big buyers?"))  # an alias: not known, kept


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
    unspelt = "SELECT amount FROM orders WHERE ship_city = 'LYON'"
    cases.append((nearest_value, lambda sql: nearest_value.nearest_value(
        sql, RuleContext(shop, diagnosis=explain_empty(shop, unspelt))), unspelt))
    unasked = "SELECT amount FROM orders WHERE amount > 100"
    cases.append((unasked_filter, lambda sql: unasked_filter.unasked_filter(
        sql, RuleContext(shop, QuestionLinks("q"), explain_empty(shop, unasked))), unasked))
    linked = "SELECT customer_name FROM orders"
    cases.append((join_path, lambda sql: join_path.join_path(sql, _error(shop, linked), RuleContext(shop)), linked))
    snake = "SELECT shipcity FROM orders"
    cases.append((respelled_column, lambda sql: respelled_column.respelled_column(
        sql, _error(shop, snake), RuleContext(shop)), snake))
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


@pytest.fixture()
def sales(tmp_path):
    """Orders with the customer's name and region beside the customer's id."""
    task = write_task(tmp_path, "task_sales", "?", files={
        "csv/orders.csv": "order_id,customer_id,customer_name,region,amount\n1,10,Ann,North,5\n2,10,Ann,North,7\n"
                          "3,11,Bob,South,2\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def test_group_by_column_groups_by_each_column_duckdb_names_or_reads_it_as_any_value(sales) -> None:
    # the name and the region beside the id, neither grouped: DuckDB names one at a time, the rule fixes both
    sql = ("SELECT customer_id, customer_name, region, SUM(amount) AS total FROM orders GROUP BY customer_id "
           "ORDER BY total DESC")
    error = _error(sales, sql)
    assert error.ungrouped_column == "customer_name"
    grouped, any_value = group_by_column.group_by_column(sql, error, RuleContext(sales))
    assert grouped == ("SELECT customer_id, customer_name, region, SUM(amount) AS total FROM orders "
                       "GROUP BY customer_id, customer_name, region ORDER BY total DESC",
                       "customer_name, region (read outside an aggregate, not grouped) added to the GROUP BY")
    assert any_value[0] == ('SELECT customer_id, ANY_VALUE(customer_name) AS "customer_name", ANY_VALUE(region) AS '
                            '"region", SUM(amount) AS total FROM orders GROUP BY customer_id ORDER BY total DESC')
    for rewritten in (grouped[0], any_value[0]):
        assert sales.query(rewritten).rows == [(10, "Ann", "North", 12), (11, "Bob", "South", 2)]
    # a qualified column inside an expression, a GROUP BY ordinal: the qualifier kept, the expression around it
    sql = "SELECT o.customer_id, upper(o.customer_name) AS who, SUM(o.amount) FROM orders AS o GROUP BY 1"
    rewrites = group_by_column.group_by_column(sql, _error(sales, sql), RuleContext(sales))
    assert [r.split(" FROM ")[0] for r, _ in rewrites] == [
        "SELECT o.customer_id, UPPER(o.customer_name) AS who, SUM(o.amount)",
        "SELECT o.customer_id, UPPER(ANY_VALUE(o.customer_name)) AS who, SUM(o.amount)"]
    assert rewrites[0][0].endswith("GROUP BY 1, o.customer_name")
    # aggregates and no GROUP BY: grouped by it, never one arbitrary region beside the total
    sql = "SELECT region, SUM(amount) FROM orders"
    assert group_by_column.group_by_column(sql, _error(sales, sql), RuleContext(sales)) == [
        ("SELECT region, SUM(amount) FROM orders GROUP BY region",
         "region (read outside an aggregate, not grouped) added to the GROUP BY")]
    # the grouping inside a CTE
    sql = ("WITH t AS (SELECT customer_id, customer_name, COUNT(*) AS n FROM orders GROUP BY customer_id) "
           "SELECT * FROM t WHERE n > 1")
    [(rewritten, _), _] = group_by_column.group_by_column(sql, _error(sales, sql), RuleContext(sales))
    assert sales.query(rewritten).rows == [(10, "Ann", 2)]


def test_group_by_column_leaves_other_errors_and_holds_to_its_bounds(sales, monkeypatch) -> None:
    sql = "SELECT customer_id, customer_name, region, SUM(amount) FROM orders GROUP BY customer_id"
    error = _error(sales, sql)
    assert group_by_column.group_by_column(sql, DuckError("x"), RuleContext(sales)) == []
    padded = sql + " " * group_by_column.MAX_SQL_CHARS  # the query text past its bound: left alone
    assert group_by_column.group_by_column(padded, error, RuleContext(sales)) == []
    # two columns to fix, one allowed: the rewrite that still fails to bind is left out
    monkeypatch.setattr(group_by_column, "COLUMNS_FIXED", 1)
    assert group_by_column.group_by_column(sql, error, RuleContext(sales)) == []
    monkeypatch.setattr(group_by_column, "COLUMNS_FIXED", 2)
    assert len(group_by_column.group_by_column(sql, error, RuleContext(sales))) == 2
    # a column the query does not read where DuckDB requires it grouped: nothing to rewrite
    other = parse_duck_error('Binder Error: column "city" must appear in the GROUP BY clause or must be part of an '
                             "aggregate function.")
    assert group_by_column.group_by_column(sql, other, RuleContext(sales)) == []


def test_a_stage_applies_its_rules_in_order_and_names_each_rewrite(shop) -> None:
    sql = "SELECT c.amount FROM orders AS o JOIN customers AS c ON o.customer_id = c.customer_id"
    rewrites = apply_on_error(sql, _error(shop, sql), RuleContext(shop))
    assert [(r.rule, r.sql.split(" FROM ")[0]) for r in rewrites] == [("moved_column", "SELECT o.amount")]
    links = QuestionLinks("q", values=(ValueHit("orders", "ship_city", "Lyon", "lyon", "case"),))
    empty = apply_on_empty("SELECT amount FROM orders WHERE ship_city = 'lyon'", RuleContext(shop, links))
    assert [r.rule for r in empty] == ["respelled_filter"]
    assert [r.__name__ for r in ON_ERROR] == ["whole_column_name", "respelled_column", "moved_column", "join_path",
                                              "link_table", "nested_aggregate", "group_by_column"]
    assert [r.__name__ for r in ON_EMPTY] == ["respelled_filter", "nearest_value", "unasked_filter", "one_table"]
    assert [r.__name__ for r in ON_ROWS] == ["period_union", "entity_union"]


def test_docs_rules_lists_every_rule_of_every_stage_and_every_linking_signal() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = [rule.__name__ for stage in (BEFORE_RUN, ON_REJECT, HINTS, ON_ERROR, ON_EMPTY, ON_ROWS) for rule in stage]
    names += [signal.name for signal in LINK_SIGNALS]
    assert [name for name in names if f"`{name}`" not in text] == []


@pytest.fixture()
def yearly(tmp_path):
    """Sales in one table a year (same columns), and a staff table that is no look-alike."""
    task = write_task(tmp_path, "task_sales", "?", files={
        "csv/sales_2021.csv": "region,amount\nnorth,5\nsouth,7\n",
        "csv/sales_2022.csv": "region,amount\nnorth,6\nsouth,9\n",
        "csv/sales_2023.csv": "region,amount\nnorth,1\n",
        "csv/staff_2022.csv": "name,amount\nann,3\n",
        "csv/销售2021年.csv": "地区,金额\n北,5\n南,7\n",
        "csv/销售2022年.csv": "地区,金额\n北,6\n南,9\n",
        "csv/企业2019年财务表.csv": "企业,年份,成本\n甲,2019,4\n",
        "csv/财务表_企业2020年_.csv": "企业,年份,成本\n甲,2020,5\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def _on_rows(catalog: Catalog, question: str, sql: str) -> list[tuple[str, str]]:
    return period_union.period_union(sql, ResultShape(("x",), 1), RuleContext(catalog, shape=read_question(question)))


def test_period_union_reads_every_named_years_look_alike_table_aggregated_per_period(yearly) -> None:
    [(rewritten, how)] = _on_rows(yearly, "What was the total amount in 2021 and 2022?",
                                  "SELECT SUM(amount) AS total FROM sales_2022")
    assert yearly.query(rewritten).rows == [("2021", 12), ("2022", 15)]
    assert yearly.query(rewritten).columns == ["year", "total"]
    assert "the union of sales_2021, sales_2022" in how and "staff_2022" not in rewritten
    # a range of years, grouped already: the period joins the GROUP BY, last in the ORDER BY
    [(rewritten, _)] = _on_rows(yearly, "The amount of each region from 2021 to 2023",
                                "SELECT region, SUM(amount) AS amount FROM sales_2021 GROUP BY region ORDER BY region")
    assert yearly.query(rewritten).rows == [("2021", "north", 5), ("2022", "north", 6), ("2023", "north", 1),
                                            ("2021", "south", 7), ("2022", "south", 9)]
    # a Chinese question: the period column named by its word, values as the table names write them
    [(rewritten, _)] = _on_rows(yearly, "2021年和2022年北的金额各是多少？", "SELECT 金额 FROM 销售2021年 WHERE 地区 = '北'")
    result = yearly.query(rewritten)
    assert (result.columns, result.rows) == (["年份", "金额"], [("2021年", 5), ("2022年", 6)])
    # tables with the period's column already, one named with its pieces in another order: unioned as they are
    [(rewritten, _)] = _on_rows(yearly, "甲在2019年与2020年的成本", "SELECT 成本 FROM 企业2019年财务表 WHERE 企业 = '甲'")
    result = yearly.query(rewritten)
    assert (result.columns, result.rows) == (["年份", "成本"], [(2019, 4), (2020, 5)])


def test_period_union_leaves_a_query_that_answers_the_periods_or_is_not_one_plain_select(yearly) -> None:
    question = "What was the total amount in 2021 and 2022?"
    assert _on_rows(yearly, "What was the total amount in 2022?", "SELECT SUM(amount) FROM sales_2022") == []
    assert _on_rows(yearly, question, "SELECT SUM(amount) FROM staff_2022") == []  # no look-alike
    assert _on_rows(yearly, question, "SELECT amount FROM sales_2021 UNION ALL SELECT amount FROM sales_2022") == []
    assert _on_rows(yearly, question, "SELECT region FROM sales_2021 ORDER BY amount DESC LIMIT 1") == []
    assert _on_rows(yearly, question, "SELECT (SELECT SUM(amount) FROM sales_2021) AS total") == []
    assert period_union.period_union("SELECT SUM(amount) FROM sales_2022", ResultShape(("x",), 0),
                                     RuleContext(yearly, shape=read_question(question))) == []
    rewrites = apply_on_rows("SELECT SUM(amount) FROM sales_2022", ResultShape(("x",), 1),
                             RuleContext(yearly, shape=read_question(question)))
    assert [r.rule for r in rewrites] == ["period_union"]


def test_period_union_holds_to_its_bounds(yearly, monkeypatch) -> None:
    question = "What was the total amount in 2021, 2022 and 2023?"
    sql = "SELECT SUM(amount) AS total FROM sales_2022"
    assert len(_on_rows(yearly, question, sql + " " * period_union.MAX_SQL_CHARS)) == 0
    monkeypatch.setattr(period_union, "MAX_UNION_TABLES", 2)
    [(rewritten, _)] = _on_rows(yearly, question, sql)
    assert yearly.query(rewritten).rows == [("2021", 12), ("2022", 15)]
    monkeypatch.setattr(period_union, "MAX_PERIODS", 2)
    assert _on_rows(yearly, question, sql) == []


@pytest.fixture()
def cities(tmp_path):
    """Listings in one table a city (same columns), a third city's table, a hosts table that is no
    look-alike, yearly tables (look-alikes by period), and the same in Chinese without separators."""
    task = write_task(tmp_path, "task_listings", "?", files={
        "csv/listings_paris.csv": "name,district,price\nLoft Marais,Marais,120\nStudio Bastille,Bastille,90\n",
        "csv/listings_rome.csv": "name,district,price\nCasa Trastevere,Trastevere,100\nAttico Monti,Monti,150\n",
        "csv/listings_lyon.csv": "name,district,price\nCanut Croix-Rousse,Croix-Rousse,70\n",
        "csv/hosts_rome.csv": "host,listing\nGiulia,Casa Trastevere\n",
        "csv/stock_2021.csv": "product,units\nBlue Kettle,5\n",
        "csv/stock_2022.csv": "product,units\nRed Teapot,6\n",
        "csv/北京市朝阳区房源表.csv": "小区,绿化率\n望京花园,35\n",
        "csv/上海市浦东新区房源表.csv": "小区,绿化率\n陆家嘴公寓,28\n"})
    with Catalog.open(task) as catalog:
        yield catalog


def _entities(catalog: Catalog, question: str, sql: str, rows: int = 1) -> list[tuple[str, str]]:
    context = RuleContext(catalog, link_question(catalog, question), shape=read_question(question))
    return entity_union.entity_union(sql, ResultShape(("x",), rows), context)


def test_differing_piece_is_the_one_piece_two_names_differ_by() -> None:
    assert differing_piece("listings_paris", "listings_rome") == ("paris", "rome")
    assert differing_piece("north_sales", "south_sales") == ("north", "south")  # never inside a word
    assert differing_piece("sales_2021", "sales_2022") == ("2021", "2022")  # nor inside a number
    assert differing_piece("北京市朝阳区房源表", "上海市浦东新区房源表") == ("北京市朝阳", "上海市浦东新")
    assert differing_piece("北京房源", "上海房源") == ("北京", "上海")  # a CJK word of two is enough
    assert differing_piece("orders", "orders_old") is None  # one piece empty
    assert differing_piece("t1", "t2") is None and differing_piece("a_paris", "a_rome") is None  # too little shared
    assert differing_piece("Orders", "orders") is None


def test_entity_union_reads_every_look_alike_table_holding_a_named_entity(cities) -> None:
    question = "What is the nightly price of the Loft Marais and of the Casa Trastevere?"
    sql = "SELECT name, price FROM listings_paris WHERE name IN ('Loft Marais', 'Casa Trastevere')"
    [(rewritten, how)] = _entities(cities, question, sql)
    assert cities.query(rewritten).rows == [("Loft Marais", 120), ("Casa Trastevere", 100)]
    assert "listings_paris alone, which lacks Casa Trastevere" in how and "listings_lyon" not in rewritten
    assert "hosts_rome" not in rewritten  # it holds the name too, but has other columns
    # an alias, an aggregate: the query as it was, over both tables
    sql = "SELECT SUM(l.price) AS total FROM listings_rome AS l WHERE l.name = 'Loft Marais' OR l.name = 'Casa Trastevere'"
    [(rewritten, _)] = _entities(cities, "The total price of Loft Marais and Casa Trastevere", sql)
    assert cities.query(rewritten).rows == [(220,)]
    # Chinese names without separators, differing by the city
    [(rewritten, _)] = _entities(cities, "望京花园和陆家嘴公寓的绿化率分别是多少？",
                                 "SELECT 小区, 绿化率 FROM 北京市朝阳区房源表 WHERE 小区 IN ('望京花园', '陆家嘴公寓')")
    assert cities.query(rewritten).rows == [("陆家嘴公寓", 28), ("望京花园", 35)]


def test_entity_union_leaves_a_query_whose_table_holds_the_entities_or_is_not_one_plain_select(cities) -> None:
    question = "What is the nightly price of the Loft Marais and of the Casa Trastevere?"
    assert _entities(cities, "What is the nightly price of the Loft Marais?",
                     "SELECT price FROM listings_paris WHERE name = 'Loft Marais'") == []  # one entity
    assert _entities(cities, "Loft Marais or Studio Bastille: which is cheaper?",
                     "SELECT name FROM listings_paris WHERE name IN ('Loft Marais', 'Studio Bastille')") == []  # holds both
    assert _entities(cities, question, "SELECT price FROM listings_lyon WHERE name = 'Casa Trastevere'") == []
    assert _entities(cities, question, "SELECT AVG(price) FROM listings_paris") == []  # names none it lacks
    assert _entities(cities, question, "SELECT price FROM listings_paris WHERE name = 'Loft Marais'") == []
    named = "name IN ('Loft Marais', 'Casa Trastevere')"
    assert _entities(cities, question, f"SELECT name, price FROM listings_paris WHERE {named} UNION ALL "
                                       f"SELECT name, price FROM listings_rome WHERE {named}") == []
    assert _entities(cities, question, "SELECT p.price FROM listings_paris AS p JOIN listings_rome AS r "
                                       "ON p.price = r.price WHERE r.name = 'Casa Trastevere'") == []  # two of the group
    assert _entities(cities, question, f"SELECT name FROM listings_paris WHERE {named} ORDER BY price LIMIT 1") == []
    assert _entities(cities, question, f"SELECT (SELECT MAX(price) FROM listings_paris WHERE {named}) AS top") == []
    assert _entities(cities, question, "SELECT price FROM listings_paris WHERE name = 'Casa Trastevere'", rows=0) == []
    # tables that differ by a period are period_union's: entities in two years' tables are left alone
    assert _entities(cities, "How many Blue Kettle and Red Teapot units?",
                     "SELECT units FROM stock_2021 WHERE product IN ('Blue Kettle', 'Red Teapot')") == []
    assert entity_union.entity_union(f"SELECT price FROM listings_paris WHERE {named}", ResultShape(("x",), 1),
                                     RuleContext(cities)) == []  # no links
    rewrites = apply_on_rows("SELECT price FROM listings_paris WHERE name LIKE '%Casa Trastevere%'", ResultShape(("x",), 1),
                             RuleContext(cities, link_question(cities, question), shape=read_question(question)))
    assert [r.rule for r in rewrites] == ["entity_union"]


def test_entity_union_holds_to_its_bounds(cities, monkeypatch) -> None:
    question = "What is the nightly price of the Loft Marais and of the Casa Trastevere?"
    sql = "SELECT name, price FROM listings_paris WHERE name IN ('Loft Marais', 'Casa Trastevere')"
    assert len(_entities(cities, question, sql)) == 1
    assert _entities(cities, question, sql + " " * entity_union.MAX_SQL_CHARS) == []
    monkeypatch.setattr(entity_union, "MAX_UNION_TABLES", 1)
    assert _entities(cities, question, sql) == []
    monkeypatch.setattr(entity_union, "MAX_UNION_TABLES", 12)
    monkeypatch.setattr(entity_union, "MAX_ENTITIES", 1)
    assert _entities(cities, question, sql) == []
    monkeypatch.setattr(entity_union, "MAX_ENTITIES", 12)
    monkeypatch.setattr(entity_union, "MAX_VALUE_HITS", 1)  # the second entity is never read
    assert _entities(cities, question, sql) == []
    monkeypatch.setattr(entity_union, "MAX_VALUE_HITS", 200)
    monkeypatch.setattr(entity_union, "MAX_HOLDERS", 1)
    assert _entities(cities, question, sql) == []
