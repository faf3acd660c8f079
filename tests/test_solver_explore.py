"""explore_data through JSON arguments: \\tables, \\schema (aliases), read-only SQL, errors as values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.data import ScratchLayout
from datasolver.solver import SolverToolbox, prepare_scratch
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import call_json, make_tiny_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def toolbox(tmp_path: Path):
    with SolverToolbox(prepare_scratch(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")) as box:
        yield box


def explore(box: SolverToolbox, query: str, **extra):
    return call_json(box, "explore_data", json.dumps({"query": query, **extra}))


def test_tables(toolbox) -> None:
    result = explore(toolbox, "\\tables")
    assert result.ok
    lines = result.text.splitlines()
    assert lines[0] == "tables: 2"
    assert lines[1] == "name\tkind\trows\tcolumns\taliases"
    assert {line.split("\t")[0] for line in lines[2:4]} == {"orders", "cities"}


def test_schema_accepts_aliases(toolbox) -> None:
    direct = explore(toolbox, "\\schema orders")
    assert direct.ok and "order_id" in direct.text and "Paris" in direct.text and "sample rows (4)" in direct.text
    assert explore(toolbox, "\\schema df_orders").text == direct.text
    assert explore(toolbox, "\\schema ORDERS").text == direct.text


def test_sql_output_shape_and_limit(toolbox) -> None:
    result = explore(toolbox, "SELECT order_id, city FROM orders ORDER BY order_id", limit=2)
    lines = result.text.splitlines()
    assert lines[0] == "rows: 2 of 4 (truncated)"
    assert lines[1] == "order_id\tcity"
    assert lines[2:4] == ["1\tParis", "2\tLyon"]


def test_the_row_counts_travel_as_a_value_with_the_sql_sent(toolbox) -> None:
    """The agent keeps the latest query that returned rows from this value, not from the text."""
    from datasolver.data import QueryResult

    sql = "SELECT order_id FROM orders WHERE city = 'Paris'"
    result = explore(toolbox, f"  {sql} ", limit=1)
    assert isinstance(result.value, QueryResult)
    assert (len(result.value.rows), result.value.total_rows, result.value.sql) == (1, 2, sql)
    none = explore(toolbox, "SELECT * FROM orders WHERE order_id < 0").value
    assert none.total_rows == 0 and explore(toolbox, "\\tables").value is None


def test_limit_is_capped_at_500(toolbox) -> None:
    result = explore(toolbox, "SELECT * FROM range(1000)", limit=5000)
    assert result.text.splitlines()[0] == "rows: 500 of 1000 (truncated)"
    assert "limit capped at 500" in result.text


def test_rewrites_are_noted(toolbox) -> None:
    bracket = explore(toolbox, "SELECT [city] FROM orders WHERE order_id = 1")
    assert bracket.ok and bracket.text.splitlines()[:3] == ["rows: 1 of 1", "city", "Paris"]
    assert "note: SQL rewritten" in bracket.text


def test_errors_are_values(toolbox) -> None:
    unknown = explore(toolbox, "\\schema ordrs")
    # An unknown table is the model's to correct, the same kind in every tool: retry, nearest names.
    assert unknown.kind == "retry" and unknown.text.startswith("UnknownTable:") and "orders" in unknown.text
    assert unknown.text.endswith("List tables with `\\tables`.")
    write = explore(toolbox, "DELETE FROM orders")
    assert write.kind == "failed" and write.text.startswith("ReadOnlyViolation:")
    bad = explore(toolbox, "SELECT nope FROM orders")
    assert bad.kind == "failed" and bad.text.startswith("QueryError:")
    assert explore(toolbox, "   ").kind == "retry"
    assert explore(toolbox, "\\frobnicate").kind == "retry"
    assert explore(toolbox, "\\schema").kind == "retry"


def test_catalog_is_opened_lazily_and_closed(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    box = SolverToolbox(ScratchLayout.of(root))
    # An open catalog keeps its DuckDB scratch folder in the task's cache/ (the parent's own).
    before = set(box.layout.cache.iterdir()) if box.layout.cache.exists() else set()

    def catalog_folders() -> set[Path]:
        return set(box.layout.cache.iterdir()) - before if box.layout.cache.exists() else set()

    box.call("read_solver", {})
    assert catalog_folders() == set()
    explore(box, "\\tables")
    assert len(catalog_folders()) == 1
    box.close()
    assert catalog_folders() == set()


def test_link_finds_the_tables_and_values_a_text_names(toolbox) -> None:
    result = explore(toolbox, "\\link orders from Lyon")
    assert result.ok
    assert "- table orders:" in result.text and "column city has the value 'Lyon'" in result.text
    assert "- table cities:" in result.text  # Lyon is a value there too
    assert explore(toolbox, "\\link").ok  # no text: the task's question
    nothing = explore(toolbox, "\\link zzz")
    assert nothing.ok and nothing.text.startswith("nothing in that text names")


def test_a_query_with_no_rows_says_which_filter_emptied_it(toolbox) -> None:
    """A small model re-sent a filter that emptied its result six times when exploration said only
    `rows: 0 of 0`: the answer now says what each filter alone keeps, as the checks do."""
    result = explore(toolbox, "SELECT order_id FROM orders WHERE city = 'paris' AND amount > 5")
    lines = result.text.splitlines()
    assert lines[:2] == ["rows: 0 of 0", "order_id"]
    why = "\n".join(lines[2:])
    assert why.startswith("why: no rows. Re-run without each filter:")
    assert "without `city = 'paris'`: 2 rows (nearest existing values: 'Paris'" in why  # dropping the misspelt city brings rows back
    assert "without `amount > 5`: 0 rows" in why
    assert result.value.total_rows == 0


def test_a_count_of_zero_is_diagnosed_and_a_true_result_is_not(toolbox) -> None:
    zero = explore(toolbox, "SELECT count(*) AS n FROM orders WHERE city = 'Pariss'")
    assert zero.text.splitlines()[:3] == ["rows: 1 of 1", "n", "0"]
    assert "why: the answer is a count of 0" in zero.text and "Pariss" in zero.text
    rows = explore(toolbox, "SELECT order_id FROM orders WHERE city = 'Paris'")
    assert "why:" not in rows.text
    no_where = explore(toolbox, "SELECT * FROM orders LIMIT 0")
    assert "why:" not in no_where.text  # nothing to diagnose: the query asked for no rows
