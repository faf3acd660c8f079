"""The engine's error hints (the `HINTS` stage, `data/rules/engine_stages.py`), each on a general example, and their bounds."""

from __future__ import annotations

import pytest

from datasolver.data import Catalog, QueryError
from datasolver.data.duck_errors import parse_duck_error
from datasolver.data.rules.column_home import HOMES_SHOWN, column_home
from datasolver.data.rules.column_piece import PIECE_COLUMNS_SHOWN, column_piece
from datasolver.data.rules.engine_stages import HINTS
from datasolver.data.rules.quoted_value import MAX_SQL_CHARS, quoted_value
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _raw(catalog: Catalog, sql: str):
    """DuckDB's own error for `sql`, parsed (the engine's hints read the same facts)."""
    with pytest.raises(QueryError) as info:
        catalog.query(sql)
    return parse_duck_error(info.value.__cause__)


@pytest.fixture()
def shop(tmp_path):
    files = {"csv/orders.csv": "order_id,status,amount\n1,open,5\n",
             "csv/customers.csv": "customer_id,city\n10,Lyon\n"}
    files.update({f"csv/region_{i}.csv": "region_id,city\n1,Lyon\n" for i in range(HOMES_SHOWN + 1)})
    files["csv/sales.csv"] = ",".join(f"sale_{i}" for i in range(PIECE_COLUMNS_SHOWN + 2)) + "\n" + "1," * 4 + "1\n"
    with Catalog.open(write_task(tmp_path, "task_shop", "?", files=files)) as catalog:
        yield catalog


def test_quoted_value_says_a_text_value_goes_in_single_quotes(shop) -> None:
    sql = 'SELECT status FROM orders WHERE amount = "five"'  # a number column: no repair makes it a string
    assert quoted_value(_raw(shop, sql), sql, shop) == (
        " (hint: \"five\" in double quotes is a column name; a text value is written in single quotes: 'five')")
    assert quoted_value(_raw(shop, sql), sql + " " * MAX_SQL_CHARS, shop) == ""  # past its bound


def test_column_home_names_the_tables_that_have_the_column_up_to_its_bound(shop) -> None:
    sql = "SELECT city FROM orders"
    hint = column_home(_raw(shop, sql), sql, shop)
    assert hint.startswith(' (the column "city" is in table customers, region_0') and hint.endswith(
        " and 2 more, not where the query looked)")
    listed = hint.split(" is in table ")[1].split(" and ")[0].split(", ")
    assert len(listed) == HOMES_SHOWN


def test_column_piece_names_the_columns_holding_the_word_up_to_its_bound(shop) -> None:
    sql = "SELECT GROUP sale FROM sales"
    hint = column_piece(_raw(shop, sql), sql, shop)
    assert hint == (' (hint: "sale" is part of the column name "sale_0", "sale_1", "sale_2" and 2 more; '
                    "write a name whole, in double quotes when it has spaces or symbols)")


def test_the_engine_adds_its_hints_in_order_to_a_failed_querys_error(shop) -> None:
    assert [h.__name__ for h in HINTS] == ["quoted_value", "column_home", "column_piece"]
    with pytest.raises(QueryError) as info:
        shop.query("SELECT city FROM orders")
    assert str(info.value).endswith("and 2 more, not where the query looked)")
