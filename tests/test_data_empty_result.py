"""Why a query found nothing (data/empty_result.py): each filter dropped in turn, the nearest
existing values, every query under a timeout and the whole diagnosis under a budget. The Solver's
`empty_result` check (tests/test_answer_checks.py) and the analyst's send-back
(tests/test_ask_checks.py) are its callers."""

from __future__ import annotations

from decimal import Decimal

import pytest

from datasolver.data import Catalog
from datasolver.data import empty_result
from datasolver.data.empty_result import FilterProbe, HavingProbe, explain_empty, having_dropped
from tests.helpers.datafiles import land_and_price

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    folder = tmp_path_factory.mktemp("data")
    (folder / "orders.csv").write_text("order_id,city,amount\n1,Paris,10.5\n2,Lyon,3.0\n3,Paris,7.0\n4,Nice,1.0\n",
                                       encoding="utf-8")
    with Catalog.open(folder) as cat:
        yield cat


def test_each_filter_is_dropped_in_turn_and_the_typed_value_meets_its_nearest_spellings(catalog) -> None:
    found = explain_empty(catalog, "SELECT amount FROM orders WHERE city = 'paris' AND amount > 1")
    assert found.readable and found.notes == []
    assert found.probes == [FilterProbe("city = 'paris'", 3, ("Paris", "Lyon", "Nice")),
                            FilterProbe("amount > 1", 0)]
    assert [p.condition for p in found.brings_rows_back] == ["city = 'paris'"]
    assert found.message() == (
        "no rows. Re-run without each filter: without `city = 'paris'`: 3 rows (nearest existing values: 'Paris', "
        "'Lyon', 'Nice'); without `amount > 1`: 0 rows. The filter whose removal brings rows back is the one to fix: "
        "match the data's exact spelling, case and format. If none does, check the join keys.")


def test_a_having_no_group_passes_is_told_with_what_its_aggregate_reaches(catalog) -> None:
    # three cities, at most two orders each: `COUNT(*) > 100` keeps none of the groups, no WHERE to blame
    sql = "SELECT city, COUNT(*) AS n FROM orders GROUP BY city HAVING COUNT(*) > 100 ORDER BY n"
    found = explain_empty(catalog, sql)
    assert found.having == [HavingProbe("COUNT(*) > 100", 3, 0, "COUNT(*)", "at most 2")]
    assert found.having_empties == found.having and found.join_sides == [] and found.notes == []
    assert found.message() == (
        "no rows. Its groups are there, but its HAVING keeps none: `COUNT(*) > 100` keeps 0 of 3 groups (COUNT(*) "
        "across the groups: at most 2). A HAVING threshold that no group reaches is the one to fix: take it from the "
        "question (its number, in the data's units), or drop it when the question states none.")
    assert having_dropped(sql, "COUNT(*) > 100") == "SELECT city, COUNT(*) AS n FROM orders GROUP BY city ORDER BY n"
    # each part alone, the constant on either side, an alias of the SELECT list, inside a CTE
    sql = ("WITH big AS (SELECT city, SUM(amount) AS total FROM orders WHERE amount > 1 GROUP BY city "
           "HAVING 50 < total AND COUNT(*) >= 1) SELECT * FROM big")
    found = explain_empty(catalog, sql)
    assert found.having == [HavingProbe("50 < total", 2, 0, "total", "at most 17.5"),
                            HavingProbe("COUNT(*) >= 1", 2, 2, "COUNT(*)", "at most 2")]
    assert [p.condition for p in found.having_empties] == ["50 < total"]
    assert "without `amount > 1`: 0 rows" in found.message()  # the WHERE's own probes are still told
    # a WHERE that matches nothing leaves no groups: the HAVING is not what emptied it
    found = explain_empty(catalog, "SELECT city FROM orders WHERE city = 'Rome' GROUP BY city HAVING COUNT(*) > 1")
    assert found.having == [HavingProbe("COUNT(*) > 1", 0, 0)] and found.having_empties == []
    assert found.message().startswith("no rows. Re-run without each filter")


def test_havings_measured_hold_to_their_bound(catalog, monkeypatch) -> None:
    sql = ("SELECT * FROM (SELECT city FROM orders GROUP BY city HAVING COUNT(*) > 5) AS a, "
           "(SELECT city AS c FROM orders GROUP BY city HAVING MAX(amount) > 500) AS b")
    assert [p.condition for p in explain_empty(catalog, sql).having] == ["COUNT(*) > 5", "MAX(amount) > 500"]
    monkeypatch.setattr(empty_result, "MAX_HAVINGS", 1)
    assert [p.condition for p in explain_empty(catalog, sql).having] == ["COUNT(*) > 5"]


def test_a_filter_over_a_cte_or_a_session_view_finds_its_values_in_the_from_clause(catalog) -> None:
    # The analyst's results are session views and its evidence SQL names them as CTEs: neither is a
    # catalog table, so the column's values come from the SELECT's own FROM clause.
    sql = ("WITH result_1 AS (SELECT city, sum(amount) AS total FROM orders GROUP BY city) "
           "SELECT total FROM result_1 WHERE city = 'Lyons'")
    found = explain_empty(catalog, sql)
    assert found.probes == [FilterProbe("city = 'Lyons'", 3, ("Lyon", "Paris", "Nice"))]
    catalog.create_temp_view("_probe_view", "SELECT city, amount FROM orders")
    try:
        view = explain_empty(catalog, "SELECT * FROM \"_probe_view\" WHERE city ILIKE 'nica'")
    finally:
        catalog.drop_temp_view("_probe_view")
    assert view.probes == [FilterProbe("city ILIKE 'nica'", 4, ("Nice", "Lyon", "Paris"))]


def test_a_null_answer_names_the_select_that_matched_nothing(catalog) -> None:
    sql = ("SELECT (SELECT sum(amount) FROM orders WHERE city = 'Pari') - "
           "(SELECT sum(amount) FROM orders WHERE city = 'Lyon') AS diff")
    found = explain_empty(catalog, sql, null_rows=1)
    assert [s.select for s in found.empty_selects] == ["SELECT SUM(amount) FROM orders WHERE city = 'Pari'"]
    assert found.empty_selects[0].probes == (FilterProbe("city = 'Pari'", 4, ("Paris", "Lyon", "Nice")),)
    assert found.message().startswith("the answer is 1 row in which every cell is NULL")


def test_without_a_catalog_or_readable_sql_the_advice_is_general(catalog) -> None:
    for found in (explain_empty(None, "SELECT 1 WHERE 1 = 0"), explain_empty(catalog, "SELEC nonsense (")):
        assert not found.readable and found.probes == []
        assert found.message().startswith("no rows. Re-check the filter values against the real distinct values")
    assert explain_empty(catalog, "SELECT amount FROM orders LIMIT 0").message() == (
        "no rows. The query has no WHERE filter to test. Check the join keys (a look-alike key matches nothing) and "
        "the table.")
    # SQL too long to parse cheaply is not parsed at all (a sandbox-written query log can hold anything).
    assert not explain_empty(catalog, "SELECT 1 WHERE " + " AND ".join(["1 = 1"] * 5000)).readable


def test_a_probe_that_would_run_for_hours_is_stopped_and_the_rest_still_answer(catalog) -> None:
    # Dropping `a.range = -1` leaves a 10^12-row join to count: stopped at the probe's timeout,
    # left out with a note; the cheap probe beside it still answers.
    sql = "SELECT a.range FROM range(1000000) a, range(1000000) b WHERE a.range = -1 AND b.range + a.range = -7"
    found = explain_empty(catalog, sql, timeout_s=0.5)
    assert found.probes == [FilterProbe("b.range + a.range = -7", 0)]
    assert len(found.notes) == 1 and "empty_result:" in found.notes[0] and "timed out" in found.notes[0]


def test_past_the_total_budget_no_more_queries_run_and_the_note_says_so(catalog) -> None:
    asked: list[str] = []
    original = catalog.query

    def counting(sql, limit=50, timeout_s=None):
        asked.append(sql)
        return original(sql, limit, timeout_s)

    catalog.query = counting  # type: ignore[method-assign]
    try:
        found = explain_empty(catalog, "SELECT amount FROM orders WHERE city = 'x' AND amount > 100", budget_s=0)
    finally:
        del catalog.query
    assert asked == [] and found.probes == []
    assert found.notes == ["empty_result: the diagnosis's time budget ran out; later filters were not tried"]



def test_counts_zero_is_one_row_of_zero_counts_from_a_query_that_counts() -> None:
    from datasolver.data.empty_result import counts_zero

    assert counts_zero("SELECT count(*) FROM t WHERE x = 'a'", [(0,)])
    assert counts_zero("SELECT count(*) AS n, sum(v) FROM t WHERE x = 'a'", [("0", None)])
    assert counts_zero("SELECT count(*) FROM t UNION ALL SELECT 1", [(Decimal("0.00"),)])
    assert not counts_zero("SELECT count(*) FROM t", [(3,)])  # a count, not 0
    assert not counts_zero("SELECT sum(v) FROM t WHERE x = 'a'", [(0,)])  # 0 that is no count
    assert not counts_zero("SELECT count(*) FROM t GROUP BY g", [(0,), (0,)])  # more than one row
    assert not counts_zero("SELECT count(*), max(name) FROM t", [(0, "Ada")])  # a value beside it
    assert not counts_zero("SELECT count(*) FROM t", [(None,)])  # NULL only: the NULL rule's, not this
    assert not counts_zero("not sql at all (", [(0,)])


def test_a_join_that_pairs_nothing_is_told_apart_from_a_filter(tmp_path) -> None:
    # As the real 1.5B model wrote it (benchmark task v1800): each table has the row its filter asks
    # for, but the join key pairs a land parcel's name with a housing project's name: nothing.
    folder = land_and_price(tmp_path)
    sql = ("SELECT DISTINCT T2.集团开发商 FROM land AS T1 JOIN price AS T2 ON T1.地块名称 = T2.项目名称 "
           "WHERE T1.城市区域 = '武昌区' AND T2.项目名称 = '武汉长江中心'")
    with Catalog.open(folder) as cat:
        found = explain_empty(cat, sql)
        assert [(s.alias, s.table, s.rows, s.filters) for s in found.join_sides] == [
            ("T1", "land", 1, ("T1.城市区域 = '武昌区'",)), ("T2", "price", 1, ("T2.项目名称 = '武汉长江中心'",))]
        assert found.message() == (
            "no rows. Re-run without each filter: without `T1.城市区域 = '武昌区'`: 0 rows; without "
            "`T2.项目名称 = '武汉长江中心'`: 0 rows. Each table has rows for its own filters (T1 (land) alone with "
            "`T1.城市区域 = '武昌区'`: 1 rows; T2 (price) alone with `T2.项目名称 = '武汉长江中心'`: 1 rows), but the "
            "join `T1.地块名称 = T2.项目名称` pairs none of them. Join on columns that hold the same values (compare a "
            "few values of each key), or answer from one table if it has every column the question needs.")
        # a filter that empties one side is a filter's fault: the usual advice
        wrong = sql.replace("'武汉长江中心'", "'长江中心'")
        assert "pairs none" not in explain_empty(cat, wrong).message()


def test_one_table_query_keeps_the_table_that_holds_what_is_selected_with_its_own_filters(tmp_path) -> None:
    from datasolver.data.empty_result import one_table_query

    folder = land_and_price(tmp_path)
    join = "FROM land AS T1 JOIN price AS T2 ON T1.地块名称 = T2.项目名称"
    with Catalog.open(folder) as cat:
        assert one_table_query(f"SELECT DISTINCT T2.集团开发商 {join} WHERE T1.城市区域 = 'x' AND T2.项目名称 = 'y' "
                               "ORDER BY T2.集团开发商", cat) == (
            "SELECT DISTINCT T2.集团开发商 FROM \"price\" AS T2 WHERE T2.项目名称 = 'y' ORDER BY T2.集团开发商",
            "the join left out: price alone, without T1.城市区域 = 'x'")
        assert one_table_query(f"SELECT count(*) {join} WHERE T2.项目名称 = 'y'", cat) is None  # counts which rows?
        assert one_table_query(f"SELECT T2.集团开发商 {join} WHERE T1.城市区域 = 'x'", cat) is None  # no own filter
        assert one_table_query(f"SELECT T1.地块名称, T2.集团开发商 {join} WHERE T2.项目名称 = 'y'", cat) is None
        assert one_table_query("SELECT 集团开发商 FROM price WHERE 项目名称 = 'y'", cat) is None  # no join
