"""The header row found below title lines in CSV files and sheets (as DuckDB's sniffer finds it),
with a note, and `--header-row N` to set it; values compared with DuckDB's and pandas' reading."""

import json

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task, xlsx_file

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

DATA = [("Afghanistan", 1952, 28.801), ("Albania", 1957, 59.28), ("Algeria", 1962, 48.303)] * 5
BODY = "country,year,lifeExp\n" + "".join(f"{c},{y},{e}\n" for c, y, e in DATA)


def _invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def _rows(task, query, *options):
    return [tuple(r) for r in json.loads(_invoke("sql", task, query, "--format", "json", *options).stdout)["rows"]]


def test_two_title_lines_above_the_header_are_found_and_noted(tmp_path):
    text = "Gapminder life expectancy\nSource: gapminder.org\n" + BODY
    task = write_task(tmp_path, files={"csv/life.csv": text})
    listing = _invoke("tables", task).output
    assert listing.split()[:5] == ["life", "rows", str(len(DATA)), "cols", "3"]
    assert ("note: csv/life.csv: header read from line 3: the 2 line(s) above it are not part of the table "
            "(the first: 'Gapminder life expectancy'); --header-row N sets the header's line") in listing

    ours = _rows(task, "SELECT country, year, lifeExp FROM life")
    path = task / "context/csv/life.csv"
    assert ours == duckdb.sql(f"SELECT * FROM read_csv('{path}')").fetchall()  # DuckDB's sniffer agrees
    assert ours == [tuple(r) for r in pd.read_csv(path, skiprows=2).itertuples(index=False)]


def test_a_scikit_learn_line_of_counts_above_the_header(tmp_path):
    header = ",".join(f"f{i}" for i in range(30)) + ",target"
    rows = [",".join(str(i * 0.5 + j) for j in range(30)) + f",{i % 2}" for i in range(40)]
    text = "40,30,malignant,benign\n" + header + "\n" + "\n".join(rows) + "\n"
    task = write_task(tmp_path, files={"breast_cancer.csv": text})
    ours = _rows(task, "SELECT count(*), sum(f3), sum(target) FROM breast_cancer")
    frame = pd.read_csv(task / "context/breast_cancer.csv", skiprows=1)
    assert ours == [(40, frame["f3"].sum(), frame["target"].sum())]


def test_a_semicolon_file_below_a_title_and_one_read_through_the_careful_way(tmp_path):
    semi = "Report 2024\n" + BODY.replace(",", ";")
    latin = ("Données 2024\n" + BODY.replace("Albania", "Émile")).encode("cp1252")
    task = write_task(tmp_path, files={"semis.csv": semi, "latin.csv": latin})
    assert _rows(task, "SELECT count(*), max(year) FROM semis") == [(len(DATA), 1962)]
    assert _rows(task, "SELECT count(*) FROM latin WHERE country = 'Émile'") == [(5,)]


def test_an_ordinary_csv_keeps_its_first_line_as_the_header(tmp_path):
    task = write_task(tmp_path, files={"t.csv": "a,b\n" + "x,y,\n" * 5, "u.csv": BODY})
    assert "header read from" not in _invoke("tables", task).output
    assert _rows(task, "SELECT count(*) FROM u") == [(len(DATA),)]


def test_header_row_option_sets_the_line(tmp_path):
    text = "title\n" + "a,b\n1,2\n" + "c,d\n3,4\n"
    task = write_task(tmp_path, files={"t.csv": text})
    assert _rows(task, 'SELECT * FROM t', "--header-row", "4") == [(3, 4)]
    listing = _invoke("tables", task, "--header-row", "4").output
    assert listing.split()[:3] == ["t", "rows", "1"] and "header read from" not in listing


def test_an_xlsx_whose_header_is_on_row_3(tmp_path):
    rows = [["Life expectancy by country"], [], ["country", "year", "lifeExp"], *[list(r) for r in DATA]]
    task = write_task(tmp_path, files={"life.xlsx": xlsx_file({"Sheet1": rows})})
    listing = _invoke("tables", task).output
    assert listing.split()[:5] == ["life", "rows", str(len(DATA)), "cols", "3"]
    assert "header read from row 3" in listing
    ours = _rows(task, "SELECT country, year, lifeExp FROM life")
    theirs = pd.read_excel(task / "context/life.xlsx", skiprows=2, engine="calamine")
    assert ours == [tuple(r) for r in theirs.itertuples(index=False)]
