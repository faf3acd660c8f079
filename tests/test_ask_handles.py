"""Result handles: storage as session views, references, evidence SQL, and the structured ops."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from datasolver.ask.errors import ReservedName, UnknownColumn, UnknownResult
from datasolver.ask.handles import Handle, HandleTable
from datasolver.ask.ops import Aggregation, SortKey, group_sql, join_sql, sort_sql
from datasolver.ask.refs import parse_ref, substitute_refs
from datasolver.data import Catalog, UnknownTable

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

SALES = "region,product,amount\nNorth,a,10\nNorth,b,5\nSouth,a,9\nEast,c,9\nWest,a,8\nWest,b,1\n"
PRODUCTS = "product,label\na,Apple\nb,Banana\nc,Cherry\n"


@pytest.fixture
def catalog(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "sales.csv").write_text(SALES, encoding="utf-8")
    (data / "products.csv").write_text(PRODUCTS, encoding="utf-8")
    with Catalog.open(data, cache_dir=tmp_path / "cache") as cat:
        yield cat


@pytest.mark.parametrize(
    ("text", "expected"),
    [("@3", 3), ("3", 3), (3, 3), ("#3", 3), (" @ 3 ", 3), ("latest", "latest"), ("@LATEST", "latest"),
     ("last", "latest"), ("result_3", None), ("h3", None), ("sales", None), (True, None), (None, None)],
)
def test_parse_ref(text, expected) -> None:
    assert parse_ref(text) == expected


def test_substitute_refs_skips_strings_and_quoted_names() -> None:
    sql = "SELECT '@1' AS s, \"@1\" FROM @1 JOIN @latest USING (k) -- @2"
    out, found = substitute_refs(sql, lambda ref: f"<{ref}>")
    assert out == "SELECT '@1' AS s, \"@1\" FROM <1> JOIN <latest> USING (k) -- @2"
    assert found == ["@1", "@latest"]


def test_handle_model_is_validated() -> None:
    good = dict(index=2, view="_ask_x_2", operation="q", sql="SELECT 1", parents=(1,), columns=("a",),
                types=("INTEGER",), rows=1)
    assert Handle(**good).ref == "@2"
    for change in ({"view": "sales"}, {"types": ()}, {"parents": (2,)}, {"rows": -1}, {"index": 0}):
        with pytest.raises(ValidationError):
            Handle(**{**good, **change})


def test_query_stores_a_view_and_returns_metadata_only(catalog) -> None:
    table = HandleTable(catalog, sample_rows=3)
    handle = table.query("SELECT region, amount FROM sales WHERE amount > 4")
    assert (handle.ref, handle.rows, handle.columns, len(handle.sample)) == ("@1", 5, ("region", "amount"), 3)
    assert handle.view.startswith("_ask_") and handle.view not in handle.operation
    second = table.query("SELECT count(*) AS n FROM @1")
    assert second.parents == (1,)
    assert table.fetch("@latest").rows == [(5,)]


def test_results_survive_the_catalog_reconnect_of_a_lazy_load(catalog) -> None:
    table = HandleTable(catalog)
    table.query("SELECT * FROM sales WHERE region = 'West'")
    catalog.query("SELECT * FROM products")  # loads a new table: the read-only connection is reopened
    assert table.fetch(1).total_rows == 2


def test_repeated_column_names_are_read_back_from_the_view(catalog) -> None:
    handle = HandleTable(catalog).query("SELECT s.product, p.product FROM sales s JOIN products p USING (product)")
    assert handle.columns == ("product", "product_1")


def test_unknown_references_and_reserved_names_never_reach_duckdb(catalog) -> None:
    table = HandleTable(catalog)
    with pytest.raises(UnknownResult, match="No results are stored yet"):
        table.query("SELECT * FROM @1")
    real = table.query("SELECT * FROM sales")
    with pytest.raises(UnknownResult, match=r"no stored result @7\. Stored results: @1"):
        table.get("@7")
    with pytest.raises(ReservedName):
        table.query(f'SELECT * FROM "{real.view}"')
    with pytest.raises(ReservedName):
        table.from_clause(real.view)
    with pytest.raises(UnknownTable):
        table.from_clause("result_1")
    assert len(table) == 1


def test_evidence_sql_is_self_contained_and_reruns(catalog) -> None:
    table = HandleTable(catalog)
    table.query("SELECT region, amount FROM sales WHERE amount > 4")
    table.query("WITH t AS (SELECT region, sum(amount) AS total FROM @1 GROUP BY region) SELECT * FROM t")
    sql = table.evidence_sql("@2")
    assert "_ask_" not in sql and "result_1 AS (" in sql
    assert sorted(catalog.query(sql).rows) == sorted(table.fetch(2).rows)


def test_group_several_aggregations_top_n_keeps_ties(catalog) -> None:
    table = HandleTable(catalog)
    relation, _ = table.from_clause("sales")
    columns = [c for c, _ in table.columns_of("sales")]
    sql = group_sql(relation, columns, ["region"], [Aggregation(func="sum", column="amount", name="total"),
                                                    Aggregation(func="count")], top=2)
    handle = table.store(sql, "group")
    # North 15, then South, East and West share 2nd place with 9: all four stay.
    rows = table.fetch(handle.index).rows
    assert handle.columns == ("region", "total", "count") and handle.rows == 4
    assert rows[0] == ("North", 15, 2)
    assert sorted(rows[1:]) == [("East", 9, 1), ("South", 9, 1), ("West", 9, 2)]


def test_sort_top_keeps_ties(catalog) -> None:
    table = HandleTable(catalog)
    relation, _ = table.from_clause("sales")
    columns = [c for c, _ in table.columns_of("sales")]
    handle = table.store(sort_sql(relation, columns, [SortKey(column="amount", descending=True)], top=2), "sort")
    assert [r[2] for r in table.fetch(handle.index).rows] == [10, 9, 9]


def test_ops_reject_unknown_columns_with_the_real_ones() -> None:
    with pytest.raises(UnknownColumn, match="no column 'amout' in the source. Columns: region, amount"):
        group_sql('"t"', ["region", "amount"], ["region"], [Aggregation(func="sum", column="amout")])
    with pytest.raises(UnknownColumn, match="needs a column"):
        group_sql('"t"', ["a"], [], [Aggregation(func="sum")])


def test_join_on_exact_keys_renames_clashing_columns(catalog) -> None:
    table = HandleTable(catalog)
    left = table.query("SELECT product, amount AS label FROM sales WHERE region = 'North'")
    relation_l, _ = table.from_clause(1)
    relation_r, _ = table.from_clause("products")
    sql = join_sql(relation_l, list(left.columns), relation_r, ["product", "label"], ["product"])
    joined = table.store(sql, "join", (1,))
    assert joined.columns == ("product", "label", "label_right")
    assert sorted(table.fetch(joined.index).rows) == [("a", 10, "Apple"), ("b", 5, "Banana")]


def test_filter_condition_may_use_results_and_is_guarded(catalog, tmp_path: Path) -> None:
    from datasolver.ask import AskToolbox
    from datasolver.ask.package import DataPackage

    toolbox = AskToolbox(DataPackage(tmp_path, catalog))
    toolbox.call("query", {"sql": "SELECT product FROM products WHERE label LIKE 'B%'"})
    kept = toolbox.call("filter", {"source": "sales", "where": "product IN (SELECT product FROM @1)"})
    assert kept.ok and kept.value.parents == (1,)
    assert sorted(toolbox.handles.fetch(kept.value.index).rows) == [("North", "b", 5), ("West", "b", 1)]
    view = toolbox.handles.get(1).view
    refused = toolbox.call("filter", {"source": "sales", "where": f'product IN (SELECT product FROM "{view}")'})
    assert refused.kind == "retry" and refused.text.startswith("ReservedName")
