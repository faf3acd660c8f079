"""The catalog answers SQL about itself (issue 32, item 3): SHOW TABLES, DESCRIBE, information_schema
and the like list the catalog's tables although it registers them lazily; and more than one statement
is refused instead of running only the last. Before: `SHOW TABLES`, `PRAGMA show_tables` and
`information_schema.tables` gave 0 rows (no table was named, so none was loaded); `SHOW ALL TABLES`
and a bare `DESCRIBE` failed with an internal `strlen(VARCHAR[])`; `SELECT 1; SELECT 2` printed 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog
from datasolver.data.errors import SqlSyntaxError
from datasolver.data.guard import lists_the_catalog
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def task(tmp_path: Path) -> Path:
    return write_task(tmp_path, files={"csv/sales.csv": "region,amount\nN,1.5\nS,2\n",
                                       "csv/people.csv": "name,born\nAnn,2001-02-03\n"})


def _rows(task: Path, sql: str) -> list[list]:
    result = CliRunner().invoke(cli, ["sql", str(task), sql, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["rows"]


def test_show_tables_and_pragma_show_tables_list_the_catalog(task: Path) -> None:
    tables = {"sales", "people"}
    assert tables <= {name for (name,) in _rows(task, "SHOW TABLES")}
    assert tables <= {name for (name,) in _rows(task, "PRAGMA show_tables")}
    listed = _rows(task, "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1")
    assert ["sales", "BASE TABLE"] in listed and ["people", "BASE TABLE"] in listed
    assert ["df_sales", "VIEW"] in listed  # aliases are views of the same table


def test_information_schema_columns_and_describe_give_the_types(task: Path) -> None:
    columns = _rows(task, "SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_name = 'people' ORDER BY ordinal_position")
    assert columns == [["name", "VARCHAR"], ["born", "DATE"]]
    described = _rows(task, "DESCRIBE sales")
    assert [row[:2] for row in described] == [["region", "VARCHAR"], ["amount", "DOUBLE"]]


@pytest.mark.parametrize("cache", ["off", "on"])
def test_show_tables_lists_each_table_once_and_no_alias(task: Path, tmp_path: Path, cache: str) -> None:
    """Issue 45: SHOW TABLES listed the `df_` aliases beside the tables (14 names for 7 tables).
    The aliases stay queryable, and information_schema marks them as views."""
    setting = "off" if cache == "off" else str(tmp_path / "cache")
    for sql in ("SHOW TABLES", "show tables;", "PRAGMA show_tables"):
        shown = CliRunner().invoke(cli, ["sql", "--table-cache", setting, str(task), sql])
        assert shown.exit_code == 0 and shown.stdout == "name\npeople\nsales\n", (sql, shown.output)
    every = CliRunner().invoke(cli, ["sql", "--table-cache", setting, str(task), "SHOW ALL TABLES"])
    assert [line.split("\t")[2] for line in every.stdout.splitlines()[1:]] == ["people", "sales"]
    alias = CliRunner().invoke(cli, ["sql", "--table-cache", setting, str(task), "SELECT count(*) FROM df_sales"])
    assert alias.stdout == "count_star()\n2\n"


@pytest.mark.parametrize("sql", ["SHOW ALL TABLES", "DESCRIBE", "SHOW"])
def test_show_all_tables_and_a_bare_describe_list_every_table_with_its_columns(task: Path, sql: str) -> None:
    rows = {row[2]: (row[3], row[4]) for row in _rows(task, sql)}  # database, schema, name, columns, types, temporary
    assert rows["sales"] == (["region", "amount"], ["VARCHAR", "DOUBLE"])
    assert rows["people"] == (["name", "born"], ["VARCHAR", "DATE"])


def test_a_query_about_one_table_still_loads_only_it(task: Path) -> None:
    with Catalog.open(task) as catalog:
        catalog.query("DESCRIBE sales")
        assert {t.name: t.loaded for t in catalog.tables()} == {"sales": True, "people": False}
        catalog.query("SELECT count(*) FROM information_schema.tables")
        assert all(t.loaded for t in catalog.tables())


@pytest.mark.parametrize(("sql", "expected"), [
    ("SHOW TABLES", True), ("show all tables;", True), ("DESCRIBE", True), ("SHOW", True),
    ("PRAGMA show_tables", True), ("SELECT * FROM information_schema.columns", True),
    ("SELECT * FROM duckdb_tables()", True), ("SELECT name FROM sqlite_master", True),
    ("DESCRIBE sales", False), ("SHOW sales", False), ("SELECT * FROM sales", False),
    ("SELECT 'information_schema' AS s FROM sales", False),  # a string is no catalog table
])
def test_which_sql_lists_the_catalog(sql: str, expected: bool) -> None:
    assert lists_the_catalog(sql) is expected


def test_more_than_one_statement_is_refused_with_a_clear_message(task: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT 1; SELECT 2"])
    assert result.exit_code == 1
    assert result.output == ("Error: 2 statements: only one statement runs at a time (DuckDB would run each and "
                             "show only the last one's rows). Send them one by one, or combine them into one query "
                             "(UNION ALL, a join, subqueries or WITH)\n")
    with Catalog.open(task) as catalog:
        with pytest.raises(SqlSyntaxError, match="^3 statements"):
            catalog.query("SELECT TOP 1 region FROM sales; SELECT 2; SELECT 3")  # T-SQL DuckDB cannot parse
        assert catalog.query("SELECT 1 AS one; -- done").rows == [(1,)]  # one statement and a trailing `;`
        assert catalog.query("SELECT ';' AS s").rows == [(";",)]
