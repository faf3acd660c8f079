"""`datasolver tables` and `datasolver sql` through click's runner, exact output where it matters."""

import json

from click.testing import CliRunner

from datasolver.cli import cli
from tests.datafiles import write_task


def test_tables_lists_names_rows_sources_aliases_and_unreadable_files(tmp_path):
    task = write_task(tmp_path, files={
        "csv/2024 Sales.csv": "region,amount\nN,1\nS,2\n",
        "json/bad.json": "{oops",
        "csv/ragged.csv": "a,b\n1,2\n3\n",
    })
    result = CliRunner().invoke(cli, ["tables", str(task)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["t_2024_sales", "rows", "2", "cols", "2", "csv/2024", "Sales.csv",
                                "aliases:", "2024", "Sales,", "df_t_2024_sales"]
    assert lines[1].split()[:5] == ["ragged", "rows", "1", "cols", "2"]
    assert any(line.startswith("unreadable: json/bad.json: broken JSON") for line in lines)
    assert any(line.startswith("note: csv/ragged.csv: 1 row(s) with the wrong number of fields") for line in lines)


def test_tables_no_load_shows_estimates(tmp_path):
    task = write_task(tmp_path, files={"a.csv": "x\n1\n2\n", "b.json": json.dumps({"table": "b", "records": [{"y": 1}]})})
    result = CliRunner().invoke(cli, ["tables", "--no-load", str(task)])
    assert result.exit_code == 0
    rows = {line.split()[0]: line.split()[2] for line in result.output.splitlines()}
    assert rows == {"a": "~2", "b": "1"}  # the JSON file's head holds the whole table


def test_sql_prints_rewrites_total_and_rows_and_writes_csv(tmp_path):
    task = write_task(tmp_path, files={"csv/t.csv": "名称,值\n甲,1\n乙,2\n丙,3\n"})
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT [名称] FROM t ORDER BY 值", "--limit", "2", "--csv", str(out)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "rows: 2 of 3",
        "名称",
        "甲",
        "乙",
        'note: SQL rewritten before it ran: [名称] → "名称"',
        f"wrote 3 rows to {out}",
    ]
    assert out.read_text(encoding="utf-8") == "名称\n甲\n乙\n丙\n"


def test_sql_errors_are_one_line_with_exit_code_1(tmp_path):
    task = write_task(tmp_path, files={"csv/t.csv": "a\n1\n"})
    result = CliRunner().invoke(cli, ["sql", str(task), "DELETE FROM t"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert "Traceback" not in result.output
