"""`datasolver tables` and `datasolver sql` through click's runner, exact output where it matters."""

import json

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


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
    assert result.stdout.splitlines() == ["名称", "甲", "乙"]  # in a pipe: TSV, only the rows
    assert result.stderr.splitlines() == [
        "rows: 2 of 3 (truncated)",
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


# ---- SQL from anywhere (issue 26, item 4): a leading `--` comment, stdin, --file, the separator

def _t(tmp_path):
    return write_task(tmp_path, files={"csv/t.csv": "a\n3\n1\n2\n"})


def test_sql_whose_query_starts_with_a_comment_is_read_as_the_query(tmp_path):
    task = _t(tmp_path)
    result = CliRunner().invoke(cli, ["sql", str(task), "-- smallest first\nSELECT a FROM t ORDER BY a", "--limit", "2"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["a", "1", "2"] and result.stderr == "rows: 2 of 3 (truncated)\n"


def test_sql_after_the_separator_everything_is_the_query(tmp_path):
    task = _t(tmp_path)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["sql", str(task), "--csv", str(out), "--limit", "1", "--",
                                      "--max\nSELECT max(a) AS m FROM t"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["m", "3"] and result.stderr.splitlines() == [f"wrote 1 rows to {out}"]
    assert out.read_text(encoding="utf-8") == "m\n3\n"


def test_sql_reads_the_query_from_stdin_with_a_dash(tmp_path):
    task = _t(tmp_path)
    result = CliRunner().invoke(cli, ["sql", str(task), "-"], input="-- from a pipe\nSELECT count(*) AS n FROM t;\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["n", "3"]


def test_sql_reads_the_query_from_a_file(tmp_path):
    task = _t(tmp_path)
    query = tmp_path / "q.sql"
    query.write_text("\ufeff/* a file */ SELECT sum(a) AS s FROM t", encoding="utf-8")
    result = CliRunner().invoke(cli, ["sql", str(task), "--file", str(query)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["s", "6"]


@pytest.mark.parametrize(("args", "stdin", "message"), [
    ([], None, "Error: no query: give QUERY, `-` to read it from stdin, or --file FILE"),
    (["SELECT 1", "--file", "q.sql"], None, "Error: give the query either as QUERY or with --file, not both"),
    (["-"], "  \n", "Error: the query is empty"),
    (["SELECT 1", "--limt", "2"], None, "Error: No such option '--limt'. (Did you mean one of: '--limit', '--timeout'?)"),
])
def test_sql_query_mistakes_are_usage_errors(tmp_path, monkeypatch, args, stdin, message):
    task = _t(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.sql").write_text("SELECT 1", encoding="utf-8")
    result = CliRunner().invoke(cli, ["sql", str(task), *args], input=stdin)
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == message


def test_sql_help_documents_stdin_file_and_the_separator():
    result = CliRunner().invoke(cli, ["sql", "--help"])
    assert result.exit_code == 0
    assert "`-` reads it from stdin, and --file FILE from a file" in " ".join(result.output.split())
    assert 'datasolver sql TASK --csv out.csv -- "-- top regions' in result.output


def test_only_an_argument_that_cannot_be_an_option_moves_behind_the_separator():
    from datasolver.cli.data_cmds import queries_behind_separator

    assert queries_behind_separator(["T", "--limit=5", "-"]) == ["T", "--limit=5", "-"]
    assert queries_behind_separator(["T", "-- c\nSELECT 1", "--limit", "5"]) == ["T", "--limit", "5", "--", "-- c\nSELECT 1"]
    assert queries_behind_separator(["T", "--", "SELECT 1"]) == ["T", "--", "SELECT 1"]
