"""`--schema-format`: how a table shown in full is written in the first prompt (profile text, CREATE
TABLE with sample values, M-Schema), on a made-up two-table task with a CJK column and a shared key.
The flag itself, through `datasolver run`: tests/test_pipeline_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.agent.brief import TaskBrief, gather_brief
from datasolver.agent.fit import fit_brief
from datasolver.agent.limits import Limits
from datasolver.agent.tables import FOLDED_HEADING
from datasolver.data import Catalog, ScratchLayout
from datasolver.data.profile import ColumnProfile, TableProfile
from datasolver.data.schema_formats import SCHEMA_FORMATS, SchemaFormat, render_groups
from datasolver.data.schema_groups import group_by_schema
from datasolver.solver.prepare import prepare_task

pytestmark = pytest.mark.fast

QUESTION = "How much did each customer spend?"
CUSTOMERS = "customer_id,客户名称,city\n1,张三,Paris\n2,李四,Lyon\n3,王五,Paris\n"
ORDERS = "order_id,customer_id,amount,day\n10,1,10.5,2024-01-02\n11,2,3,2024-01-03\n12,1,7.25,2024-02-01\n13,3,,2024-02-05\n"

# Today's rendering, byte for byte (the profile format is the default and must not move).
PROFILE = """\
customers: 3 rows, in csv/; no NULLs
  customer_id BIGINT, unique, 1 .. 3
  客户名称 VARCHAR, unique, e.g. 张三
  city VARCHAR, 2 distinct, e.g. Paris

orders: 4 rows, in csv/
  order_id BIGINT, unique, 10 .. 13
  customer_id BIGINT, 3 distinct, 1 .. 3
  amount DOUBLE, 3 distinct, 3.0 .. 10.5, 1 NULL
  day DATE, unique, 2024-01-02 .. 2024-02-05"""

CREATE_TABLE = """\
-- customers: 3 rows, in csv/; no NULLs
CREATE TABLE "customers" (
  "customer_id" BIGINT, -- e.g. 1, 3
  "客户名称" VARCHAR, -- e.g. '张三', '王五'
  "city" VARCHAR -- e.g. 'Paris', 'Lyon'
);

-- orders: 4 rows, in csv/
CREATE TABLE "orders" (
  "order_id" BIGINT, -- e.g. 10, 13
  "customer_id" BIGINT, -- e.g. 1, 3
  "amount" DOUBLE, -- e.g. 10.5, 3.0
  "day" DATE -- e.g. '2024-01-02', '2024-02-05'
);"""

MSCHEMA = """\
【DB_ID】 task_shop
【Schema】
# Table: customers
[
(customer_id:BIGINT, Examples: [1, 3]),
(客户名称:VARCHAR, Examples: [张三, 王五]),
(city:VARCHAR, Examples: [Paris, Lyon])
]
# Table: orders
[
(order_id:BIGINT, Examples: [10, 13]),
(customer_id:BIGINT, Examples: [1, 3]),
(amount:DOUBLE, Examples: [10.5, 3.0]),
(day:DATE, Examples: [2024-01-02, 2024-02-05])
]
【Foreign keys】
customers.customer_id=orders.customer_id"""


def make_shop_task(parent: Path) -> Path:
    task = parent / "task_shop"
    (task / "context" / "csv").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_shop", "question": QUESTION}), encoding="utf-8")
    (task / "context" / "csv" / "customers.csv").write_text(CUSTOMERS, encoding="utf-8")
    (task / "context" / "csv" / "orders.csv").write_text(ORDERS, encoding="utf-8")
    return task


@pytest.fixture(scope="module")
def briefs(tmp_path_factory: pytest.TempPathFactory) -> dict[SchemaFormat, TaskBrief]:
    root = tmp_path_factory.mktemp("formats")
    task = make_shop_task(root / "input")
    found = {}
    for schema_format in SCHEMA_FORMATS:
        scratch = prepare_task(task, root / f"scratch_{schema_format}")
        with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
            found[schema_format] = gather_brief(ScratchLayout.of(scratch), catalog, Limits(schema_format=schema_format))
    return found


@pytest.mark.parametrize("schema_format, expected", [
    ("profile", PROFILE), ("create_table", CREATE_TABLE), ("mschema", MSCHEMA)])
def test_each_format_writes_the_tables_as_the_model_sees_them(briefs, schema_format, expected) -> None:
    assert briefs[schema_format].tables == expected


def test_the_default_is_todays_profile_text(tmp_path: Path) -> None:
    assert Limits().schema_format == "profile"
    scratch = prepare_task(make_shop_task(tmp_path / "input"), tmp_path / "scratch")
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        assert gather_brief(ScratchLayout.of(scratch), catalog).tables == PROFILE


@pytest.mark.parametrize("schema_format", ["create_table", "mschema"])
def test_a_folded_table_is_one_line_in_every_format(briefs, schema_format) -> None:
    digest = briefs[schema_format].digest
    text = digest.render(["orders"])
    assert text.endswith(FOLDED_HEADING + "\n  - orders: 4 rows, in csv/; columns: order_id, customer_id, amount, day")
    assert "order_id BIGINT" not in text and "order_id:BIGINT" not in text
    assert ("customers" in text) and ("【Foreign keys】" not in text)  # a key to a folded table is not listed
    # the budget folds the least relevant table with the same mechanism, whatever the format
    whole = fit_brief(briefs[schema_format], 100_000)
    assert whole.folded == () and whole.tables == digest.render()
    tight = fit_brief(briefs[schema_format], 10)
    assert len(tight.folded) == 1 and FOLDED_HEADING in tight.tables


def test_notes_and_same_schema_groups_keep_their_place_in_the_other_formats() -> None:
    def month(name: str, value: str) -> TableProfile:
        return TableProfile(name, 2, f"csv/{name}.csv", [
            ColumnProfile("month", "VARCHAR", 0, 1, value), ColumnProfile("amount", "DOUBLE", 0, 2, "1.5", "1.5", "9.0")])

    groups = group_by_schema([month("sales_01", "2024-01"), month("sales_02", "2024-02")])
    notes = {"sales_01": {"amount": "euros"}, "sales_02": {"amount": "euros"}}
    (create,) = render_groups(groups, "create_table", notes)
    assert create == (
        "-- These 2 tables share one schema, written once (name: rows, source; its constant values):\n"
        "--   sales_01: 2 rows, in csv/; month=2024-01\n"
        "--   sales_02: 2 rows, in csv/; month=2024-02\n"
        'CREATE TABLE "sales_01" (\n'
        '  "month" VARCHAR, -- one value per table\n'
        '  "amount" DOUBLE -- e.g. 1.5, 9.0 — euros\n'
        ");")
    (mschema,) = render_groups(groups, "mschema", notes, db_id="t")
    assert "# Table: sales_01, sales_02\n" in mschema
    assert "(month:VARCHAR, one value per table),\n(amount:DOUBLE, euros, Examples: [1.5, 9.0])\n]" in mschema
    assert "【Foreign keys】" not in mschema  # one group: nothing to join


def test_a_quote_in_a_sample_is_written_as_sql_writes_it() -> None:
    table = TableProfile("t", 1, "csv/t.csv", [ColumnProfile("name", "VARCHAR", 0, 1, "O'Brien\nJr")])
    (text,) = render_groups(group_by_schema([table]), "create_table")
    assert "\"name\" VARCHAR -- always 'O''Brien\\nJr'" in text
