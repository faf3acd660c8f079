"""Date styles other than ISO typed as DATE where the column settles them, ambiguous ones left as
text with a note that names the strptime format; thousands points read as numbers in a file whose
numbers are written with decimal commas. Values are compared with what DuckDB reads from the same
file given the format."""

import json

import duckdb
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data.infer_types import SAMPLE_ROWS
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

HEADER = "id;ymd;dot;dmy;mdy;amb;pop;price\n"
ROWS = [
    "1;2012/01/01;31.12.1952;13/01/2012;01/13/2012;01/02/2012;8.425.333;1.234,5\n",
    "2;2012/1/2;1.2.1953;02/03/2012;03/02/2012;03/04/2012;12;0,5\n",
    "3;;;;;;;\n",
]
REFERENCE = ("SELECT id::BIGINT, strptime(ymd, '%Y/%m/%d')::DATE, strptime(dot, '%d.%m.%Y')::DATE, "
             "strptime(dmy, '%d/%m/%Y')::DATE, strptime(mdy, '%m/%d/%Y')::DATE, amb, "
             "replace(pop, '.', '')::BIGINT, replace(replace(price, '.', ''), ',', '.')::DOUBLE "
             "FROM read_csv('{}', delim=';', header=true, all_varchar=true) ORDER BY id::INT")


def _sql(task, query):
    result = CliRunner().invoke(cli, ["sql", str(task), query, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _reference(path):
    return [[v.isoformat() if hasattr(v, "isoformat") else v for v in row]
            for row in duckdb.sql(REFERENCE.format(path)).fetchall()]


def test_date_styles_and_thousands_points_read_as_duckdb_reads_them_with_the_format(tmp_path):
    task = write_task(tmp_path, files={"w.csv": HEADER + "".join(ROWS)})
    result = _sql(task, "SELECT * FROM w ORDER BY id")
    assert [c["type"] for c in result["columns"]] == ["BIGINT", "DATE", "DATE", "DATE", "DATE", "VARCHAR", "BIGINT", "DOUBLE"]
    assert result["rows"] == _reference(task / "context/w.csv")
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "column 'dot': dates written day.month.year read as dates (31.12.1952 → 1952-12-31)" in listing
    assert "column 'dmy': dates written day/month/year read as dates (a day past 12 comes first" in listing
    assert "column 'mdy': dates written month/day/year read as dates (a day past 12 comes second" in listing
    assert ("column 'amb' left as text: each date (e.g. '01/02/2012') reads day-first and month-first; "
            "strptime(amb, '%d/%m/%Y') or strptime(amb, '%m/%d/%Y') reads it as one") in listing
    assert "column 'pop': numbers written with thousands points read as numbers (8.425.333 → 8425333)" in listing


def test_thousands_points_stay_text_where_commas_separate_fields(tmp_path):
    task = write_task(tmp_path, files={"c.csv": "id,pop\n1,8.425.333\n2,12\n"})
    assert _sql(task, "SELECT pop FROM c ORDER BY id")["rows"] == [["8.425.333"], ["12"]]


def test_a_day_past_12_after_the_sample_settles_the_order(tmp_path):
    rows = [f"{i};0{1 + i % 9}/0{1 + i % 7}/2012\n" for i in range(SAMPLE_ROWS + 10)]
    rows.append(f"{SAMPLE_ROWS + 10};25/12/2012\n")
    task = write_task(tmp_path, files={"late.csv": "id;d\n" + "".join(rows)})
    path = task / "context/late.csv"
    ours = _sql(task, "SELECT typeof(d), count(*), min(d)::VARCHAR, max(d)::VARCHAR, sum(day(d)) FROM late GROUP BY 1")
    reference = duckdb.sql(f"SELECT 'DATE', count(*), min(x)::VARCHAR, max(x)::VARCHAR, sum(day(x)) FROM "
                           f"(SELECT strptime(d, '%d/%m/%Y')::DATE AS x FROM read_csv('{path}', delim=';', "
                           f"all_varchar=true))").fetchall()
    assert ours["rows"] == [list(reference[0])]


def test_ambiguous_dates_in_a_large_file_stay_text(tmp_path):
    rows = [f"{i};0{1 + i % 9}/0{1 + i % 7}/2012\n" for i in range(SAMPLE_ROWS + 10)]
    task = write_task(tmp_path, files={"amb.csv": "id;d\n" + "".join(rows)})
    assert _sql(task, "SELECT typeof(d), d FROM amb WHERE id = 1")["rows"] == [["VARCHAR", "02/02/2012"]]
    assert "strptime(d, '%d/%m/%Y')" in CliRunner().invoke(cli, ["tables", str(task)]).output
