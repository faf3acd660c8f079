"""`\\lint` (knowledge.md against the data) and `\\joins A B` (candidate keys with coverage and
fan-out), as library calls and as explore_data meta-commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.data import Catalog, ScratchLayout, UnknownTable, join_candidates, lint_knowledge, render_joins

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

KNOWLEDGE = """# Orders
| 列名 | 类型 | 释义 |
|---|---|---|
| order_id | int | order |
| amonut | double | amount in euros |
| 城市（名） | text | city |

The `status` column is 'open' or 'closed' or 'lost'.

```sql
SELECT sum(amount) FROM orders WHERE status = 'open'
```

```sql
SELECT * FROM orders WHERE status = 'archived'
```

```sql
SELECT nosuch FROM orders
```
"""


def make_task(parent: Path) -> Path:
    task = parent / "task_lint"
    (task / "context" / "csv").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_lint", "question": "Total open amount?"}),
                                     encoding="utf-8")
    orders = ["order_id,customer_id,customer_no,amount,status,城市(名)"]
    for i in range(1, 21):
        orders.append(f"{i},{(i - 1) % 10 + 1},{100 + i if i > 2 else i},{i * 1.5},{'open' if i % 2 else 'closed'},"
                      "Paris")
    (task / "context" / "csv" / "orders.csv").write_text("\n".join(orders) + "\n", encoding="utf-8")
    customers = ["customer_id,name"] + [f"{i},c{i}" for i in range(1, 11)] + ["3,dup"]
    (task / "context" / "csv" / "customers.csv").write_text("\n".join(customers) + "\n", encoding="utf-8")
    (task / "context" / "knowledge.md").write_text(KNOWLEDGE, encoding="utf-8")
    return task


@pytest.fixture(scope="module")
def task(tmp_path_factory) -> Path:
    return make_task(tmp_path_factory.mktemp("lint"))


def lint(task: Path, knowledge: str):
    with Catalog.open(task) as catalog:
        return lint_knowledge(catalog, knowledge)


def test_lint_finds_names_queries_and_values(task: Path) -> None:
    report = lint(task, KNOWLEDGE)
    assert report.findings == [
        "no table or column named `amonut`; nearest: `amount`",
        "`城市（名）` is written `城市(名)` in the data",
        "example SQL #2 (`SELECT * FROM orders WHERE status = 'archived'`) returns no rows",
        report.findings[3],
        "value 'lost' stated for `status` occurs in no row of it",
    ]
    assert report.findings[3].startswith("example SQL #3 (`SELECT nosuch FROM orders`) fails: ")
    assert (report.queries_checked, report.values_checked) == (3, 3)
    short = report.render(max_lines=3)
    assert short.splitlines()[0].startswith("knowledge.md lint: 5 finding(s)")
    assert short.splitlines()[-1] == "- … 4 more: run `\\lint`" and len(short.splitlines()) == 3


ENGLISH = """## Table `orders`

Join key: `orders.customer_id` references `customers.customer_id`.
Join key: `orders.customer_key` references `customers.customer_id`.

| column | type | description | values |
|---|---|---|---|
| status | text | Order status: 'open' or 'closed' or 'void' or 'gone'; Joe's shop calls it 'state' | one of: open, closed |
| customer_id | integer | Foreign key referencing the 'customer_id' column of the 'customers' table | e.g. 1; 2 |
| amount | float | Amount in euros, e.g. '1.5' instead of '1,50' | e.g. 1.5 |
"""


def test_lint_reads_english_column_lists_and_qualified_names(task: Path) -> None:
    report = lint(task, ENGLISH)
    # `orders.customer_id` is a table's column; quoted table and column names are names, not
    # values; a value after "instead of" is a counter-example; an apostrophe starts no value; the
    # values of one column found in no row make one finding
    assert report.findings == [
        "table `orders` has no column `customer_key`; nearest: `customer_no`, `customer_id`",
        "values 'void', 'gone', 'state' stated for `status` occur in no row of it",
    ]


def test_joins_show_the_real_key_next_to_a_look_alike(task: Path) -> None:
    with Catalog.open(task) as catalog:
        a, b, candidates = join_candidates(catalog, "orders", "customers")
        with pytest.raises(UnknownTable):
            join_candidates(catalog, "orders", "nosuch")
    by_pair = {(c.left, c.right): c for c in candidates}
    real, look_alike = by_pair["customer_id", "customer_id"], by_pair["customer_no", "customer_id"]
    assert (real.left_keys, real.matched_keys, real.fan_out) == (10, 10, 2)  # customer 3 twice in B
    assert (look_alike.left_keys, look_alike.matched_keys) == (20, 2)
    assert candidates[0] is real
    text = render_joins(a, b, candidates)
    assert 'orders."customer_id" = customers."customer_id": 100.0% of 10 keys found, fan-out 2' in text
    assert 'orders."customer_no" = customers."customer_id": 10.0% of 20 keys found, fan-out 1' in text


def test_explore_data_meta_commands_and_the_prompt_summary(task: Path, tmp_path: Path) -> None:
    from datasolver.agent import Limits
    from datasolver.agent.assemble import build_messages
    from datasolver.agent.brief import gather_brief
    from datasolver.solver import SolverToolbox
    from datasolver.solver.prepare import prepare_task

    scratch = prepare_task(task, tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(scratch)) as toolbox:
        lint = toolbox.call("explore_data", {"query": "\\lint"})
        joins = toolbox.call("explore_data", {"query": "\\joins orders customers"})
        wrong = toolbox.call("explore_data", {"query": "\\joins orders"})
        brief = gather_brief(ScratchLayout.of(scratch), toolbox.context.open_catalog(), Limits())
    assert lint.ok and "no table or column named `amonut`; nearest: `amount`" in lint.text
    assert joins.ok and "100.0% of 10 keys found" in joins.text
    assert wrong.kind == "retry" and "needs two table names" in wrong.text
    user = build_messages(brief, Limits())[1]["content"]
    assert "# Evidence hints" in user and "- `城市（名）` is written `城市(名)` in the data" in user
    assert len(brief.lint.splitlines()) <= 15


def test_ask_tools_lint_and_join_keys(task: Path) -> None:
    from datasolver.ask.package import open_package
    from datasolver.ask.toolbox import AskToolbox

    package = open_package(task)
    try:
        toolbox = AskToolbox(package)
        assert {"lint", "join_keys"} <= set(toolbox.names)
        assert "nearest: `amount`" in toolbox.call("lint", {}).text
        assert "100.0% of 10 keys found" in toolbox.call("join_keys", {"left": "orders", "right": "customers"}).text
    finally:
        package.close()


FALCON = Path(__file__).resolve().parents[1].parent / "shared" / "tasks" / "dev" / "input" / "task_falcon_414"


def falcon_task() -> Path:
    if not (FALCON / "context" / "knowledge.md").is_file():
        pytest.skip(f"{FALCON} is absent (only present beside the project's own checkout)")
    return FALCON


def test_a_falcon_knowledge_md_names_nothing_that_is_not_there(tmp_path: Path) -> None:
    # Its SQLite tables' columns are not in the catalog's metadata; they exist all the same.
    from datasolver.solver.prepare import prepare_task

    task = falcon_task()
    knowledge = (task / "context" / "knowledge.md").read_text(encoding="utf-8")
    with Catalog.open(prepare_task(task, tmp_path)) as catalog:
        report = lint_knowledge(catalog, knowledge)
    assert report.names_checked > 40
    assert report.findings == []


def test_a_wrong_name_in_a_falcon_knowledge_md_is_still_found(tmp_path: Path) -> None:
    from datasolver.solver.prepare import prepare_task

    task = falcon_task()
    knowledge = (task / "context" / "knowledge.md").read_text(encoding="utf-8")
    wrong = knowledge.replace("| promised_time |", "| promised_tiem |", 1)  # a column of a SQLite table
    assert wrong != knowledge
    with Catalog.open(prepare_task(task, tmp_path)) as catalog:
        report = lint_knowledge(catalog, wrong)
    assert len(report.findings) == 1, report.findings
    assert report.findings[0].startswith("no table or column named `promised_tiem`; nearest: `promised_time`")


def test_columns_of_sqlite_and_json_tables_count_as_names(tmp_path: Path) -> None:
    import sqlite3

    task = tmp_path / "task_mixed"
    (task / "context" / "db").mkdir(parents=True)
    (task / "context" / "json").mkdir()
    (task / "task.json").write_text(json.dumps({"task_id": "task_mixed", "question": "?"}), encoding="utf-8")
    with sqlite3.connect(task / "context" / "db" / "shop.db") as conn:
        conn.execute("CREATE TABLE sales (sale_id INTEGER, quantity INTEGER, region TEXT)")
        conn.execute("INSERT INTO sales VALUES (1, 3, 'north')")
    (task / "context" / "json" / "stores.json").write_text(
        json.dumps({"table": "stores", "records": [{"store_code": "A1", "opened": "2020"}]}), encoding="utf-8")
    knowledge = ("| 列名 | 释义 |\n|---|---|\n| sale_id | id |\n| quantity | units |\n| store_code | store |\n"
                 "| quantty | typo |\n\nThe `region` and `opened` columns.\n")
    with Catalog.open(task) as catalog:
        report = lint_knowledge(catalog, knowledge)
        assert catalog.column_names("sales", load=False) == ["sale_id", "quantity", "region"]  # no load
        assert not catalog.table("sales").loaded
    assert report.findings == ["no table or column named `quantty`; nearest: `quantity`"]


def test_examples_need_only_look_like_the_data(tmp_path: Path) -> None:
    # Shared knowledge.md text gives examples from other tasks: an example name need not exist and
    # an example value need only have the column's form; a stated value still has to occur.
    task = tmp_path / "task_examples"
    (task / "context" / "csv").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_examples", "question": "?"}), encoding="utf-8")
    (task / "context" / "csv" / "deals.csv").write_text(
        "区域,年月,kind\n广州市白云区,2020年09月,land\n武汉市江岸区,2021年01月,flat\n", encoding="utf-8")
    knowledge = ("表名形如 `<城市><区县>表`，例如 `北京市东城区2021年09月表`。\n\n"
                 "| 列名 | 释义 |\n|---|---|\n| 区域 | 文本，如“北京市东城区” |\n"
                 "| 年月 | 日期时间文本，如“2021-09-01 08:00:00” |\n\n"
                 "The `kind` column is 'land' or 'house'.\n")
    with Catalog.open(task) as catalog:
        report = lint_knowledge(catalog, knowledge)
    example, stated = report.findings
    assert example.startswith("example value '2021-09-01 08:00:00' stated for `年月` has a form no row of it has "
                              "(a row holds ")
    assert example.endswith("'2020年09月')")  # the first row's, in file order
    assert stated == "value 'house' stated for `kind` occurs in no row of it"


def test_the_row_a_finding_quotes_is_the_first_in_file_order(tmp_path: Path) -> None:
    # The finding goes into the prompt, so it must not change from run to run: any_value() gave
    # the first row of whichever row group a parallel scan reached first (here 'AB-122880').
    from tests.helpers.datafiles import write_task

    rows = ["code,n"] + [f"AB-{i},{i}" for i in range(190_000)]
    task = write_task(tmp_path, files={"csv/codes.csv": "\n".join(rows) + "\n"})
    with Catalog.open(task) as catalog:
        findings = {tuple(lint_knowledge(catalog, "- `code`: the item code, e.g. '12345'\n").findings)
                    for _ in range(3)}
    assert findings == {("example value '12345' stated for `code` has a form no row of it has (a row holds 'AB-0')",)}


RETQA = Path(__file__).resolve().parents[1].parent / "shared" / "tasks" / "dev" / "input" / "task_retqa_v60"


def test_a_retqa_knowledge_md_keeps_its_real_finding_only(tmp_path: Path) -> None:
    from datasolver.solver.prepare import prepare_task

    if not (RETQA / "context" / "knowledge.md").is_file():
        pytest.skip(f"{RETQA} is absent (only present beside the project's own checkout)")
    knowledge = (RETQA / "context" / "knowledge.md").read_text(encoding="utf-8")
    with Catalog.open(prepare_task(RETQA, tmp_path)) as catalog:
        report = lint_knowledge(catalog, knowledge)
    assert report.findings == ["`时间（月份）` is written `时间(月份)` in the data"]
