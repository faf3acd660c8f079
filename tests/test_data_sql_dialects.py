"""SQL written for other databases runs on DuckDB: each idiom is rewritten, RUN, and its value
checked (the on-reject rules of `data/rules/`, `data/rules/pg_dates.py`)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog
from datasolver.data.rules.pg_dates import read_dates_as_text, rewrite_pg_dates
from datasolver.data.rules.widen_float_casts import widen_float_casts

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

ROWS = """id,d,s,ts,a,b,n
1,2024-03-05,05/03/2024,2024-03-05 14:07:09,1,3,
2,2023-12-31,31/12/2023,2023-12-31 09:05:00,5,2,4
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dialects")
    (root / "t.csv").write_text(ROWS, encoding="utf-8")
    return root


IDIOMS = [
    # PostgreSQL: date templates, casts
    ("SELECT TO_DATE(s, 'DD/MM/YYYY') FROM t ORDER BY id",
     [datetime.date(2024, 3, 5), datetime.date(2023, 12, 31)], "postgres"),
    ("SELECT to_timestamp(s || ' 10', 'DD/MM/YYYY HH24') FROM t ORDER BY id",
     [datetime.datetime(2024, 3, 5, 10), datetime.datetime(2023, 12, 31, 10)], "postgres"),
    ("SELECT to_char(d, 'YYYY-MM') FROM t ORDER BY id", ["2024-03", "2023-12"], "postgres"),
    ("SELECT to_char(ts, 'FMDD Mon YYYY, HH12:MI AM') FROM t ORDER BY id",
     ["5 Mar 2024, 02:07 PM", "31 Dec 2023, 09:05 AM"], "postgres"),
    ("SELECT to_char(d, 'Month') FROM t ORDER BY id", ["March    ", "December "], "postgres"),
    ("SELECT to_char(d, 'YYYY-\"Q\"Q') FROM t ORDER BY id", ["2024-Q1", "2023-Q4"], "postgres"),
    ("SELECT a::float / b FROM t ORDER BY id", [1 / 3, 2.5], "DOUBLE"),
    ("SELECT CAST(a AS REAL) / b FROM t ORDER BY id", [1 / 3, 2.5], "DOUBLE"),
    # MySQL
    ("SELECT DATE_FORMAT(d, '%M %Y') FROM t ORDER BY id", ["March 2024", "December 2023"], "mysql"),
    ("SELECT STR_TO_DATE(s, '%d/%m/%Y') FROM t ORDER BY id",
     [datetime.date(2024, 3, 5), datetime.date(2023, 12, 31)], "mysql"),
    ("SELECT DATEDIFF(d, '2023-12-25') FROM t ORDER BY id", [71, 6], "mysql"),  # MySQL order: a - b
    ("SELECT IFNULL(n, 0) FROM t ORDER BY id", [0, 4], None),  # DuckDB has IFNULL itself
    ("SELECT ISNULL(n) FROM t ORDER BY id", [True, False], "mysql"),  # one argument: MySQL's `n IS NULL`
    ("SELECT SUM(ISNULL(n)) FROM t", [1], "mysql"),
    ("SELECT id FROM t ORDER BY id LIMIT 1, 1", [2], "sqlite"),  # offset, count
    # SQLite: the format first
    ("SELECT strftime('%Y', '2024-03-05') FROM t ORDER BY id", ["2024", "2024"], "sqlite"),
    ("SELECT strftime('%m', d) FROM t ORDER BY id", ["03", "12"], None),  # DuckDB takes both orders
    # T-SQL
    ("SELECT TOP 1 id FROM t ORDER BY id DESC", [2], "tsql"),
    ("SELECT ISNULL(n, 0) FROM t ORDER BY id", [0, 4], "tsql"),  # two: T-SQL's COALESCE
]


@pytest.mark.parametrize(("sql", "expected", "rewrite"), IDIOMS)
def test_each_idiom_runs_rewritten_and_gives_its_value(folder: Path, sql: str, expected: list, rewrite) -> None:
    with Catalog.open(folder) as catalog:
        relation = catalog.sql(sql)
        values = [row[0] for row in relation.fetch(10).rows]
    if isinstance(expected[0], float):
        assert values == pytest.approx(expected, rel=1e-15)  # a 4-byte float gives 0.3333333432674408
    else:
        assert values == expected
    if rewrite is None:
        assert relation.rewrites == []
    else:
        assert any(rewrite in note for note in relation.rewrites), relation.rewrites


# The loader types `s` (05/03/2024, 31/12/2023: the 31 settles the order) as DATE; the same dates as text.
TEXT_DATES = "(SELECT id, strftime(s, '%d/%m/%Y') AS s FROM t) AS t"
DATE_TEMPLATES = [(sql, expected, rewrite) for sql, expected, rewrite in IDIOMS
                  if any(f in sql.lower() for f in ("to_date", "to_timestamp", "str_to_date"))]


def test_the_fixtures_slash_dates_are_typed_date(folder: Path) -> None:
    with Catalog.open(folder) as catalog:
        assert ("s", "DATE") in [row[:2] for row in catalog.sql("DESCRIBE t").fetch(10).rows]
        assert catalog.sql(f"SELECT typeof(s) FROM {TEXT_DATES} LIMIT 1").fetch(1).rows == [("VARCHAR",)]


@pytest.mark.parametrize(("sql", "expected", "rewrite"), DATE_TEMPLATES)
def test_a_date_template_reads_a_text_column_and_a_date_column_alike(folder: Path, sql: str, expected: list,
                                                                     rewrite: str) -> None:
    assert len(DATE_TEMPLATES) == 3
    with Catalog.open(folder) as catalog:
        relation = catalog.sql(sql.replace("FROM t", f"FROM {TEXT_DATES}"))
        assert [row[0] for row in relation.fetch(10).rows] == expected
    assert any(rewrite in note for note in relation.rewrites), relation.rewrites
    assert not any("ISO" in note for note in relation.rewrites)  # text in the template's order: read as written


def test_a_strptime_template_also_reads_iso_text() -> None:
    sql, notes = read_dates_as_text("SELECT STRPTIME(s || ' 10', '%d/%m/%Y %H'), strptime(x, '%H:%M') FROM t")
    assert sql == ("SELECT STRPTIME(CAST(s || ' 10' AS VARCHAR), ['%d/%m/%Y %H', '%Y-%m-%d %H', '%Y-%m-%d', "
                   "'%Y-%m-%d %H:%M:%S', '%Y-%m-%d %H:%M:%S.%f']), strptime(x, '%H:%M') FROM t")  # no date: as is
    assert len(notes) == 1
    assert read_dates_as_text("SELECT strptime(s, '%d %H %m/%Y') FROM t")[1] == []  # an hour inside the date


def test_the_cli_shows_the_rewrite(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", str(folder), "SELECT to_char(d, 'YYYY') AS y FROM t ORDER BY id"])
    assert result.exit_code == 0, result.output
    assert "2024" in result.output and "note: SQL rewritten" in result.output


# --------------------------------------------------------------------------- PostgreSQL templates


@pytest.mark.parametrize(("template", "expected"), [
    ("Day", "Tuesday  "), ("FMDay", "Tuesday"), ("DAY", "TUESDAY  "), ("dy", "tue"), ("MON", "MAR"),
    ("D", "3"), ("ID", "2"), ("WW", "10"), ("IW", "10"), ("DDD", "065"), ("FMMM/FMDD", "3/5"),
    ("YYYY\"T\"HH24", "2024T00"), ("YY", "24"), ("100%", "100%"),
])
def test_postgres_templates_give_postgres_text(folder: Path, template: str, expected: str) -> None:
    sql, notes = rewrite_pg_dates(f"SELECT to_char(d, '{template}') FROM t WHERE id = 1")
    if not any(ch.isalpha() for ch in template.replace("%", "")):
        assert notes == [] and "to_char" in sql  # no date pattern: not a date template
        return
    with Catalog.open(folder) as catalog:
        assert catalog.sql(sql).fetch(1).rows[0][0] == expected


def test_templates_that_are_not_date_templates_are_left_alone() -> None:
    for sql in ("SELECT to_char(x, '999.99') FROM t", "SELECT to_char(x, fmt) FROM t",
                "SELECT to_date(s, 'YYYY-\"Q\"Q') FROM t", "SELECT 'to_char(d, ''YYYY'')' FROM t"):
        assert rewrite_pg_dates(sql) == (sql, [])


def test_nested_calls_are_rewritten_inside_out() -> None:
    sql, notes = rewrite_pg_dates("SELECT to_char(to_date(s, 'DD/MM/YYYY'), 'YYYY') FROM t")
    assert sql == "SELECT strftime(CAST(strptime(s, '%d/%m/%Y') AS DATE), '%Y') FROM t"
    assert len(notes) == 1


# --------------------------------------------------------------------------- float casts


def test_only_casts_to_float_are_widened() -> None:
    sql = "SELECT a::float, b :: REAL, CAST(c AS float4), TRY_CAST(d AS Float), 1 AS real, 'x::float', \"float\" FROM t"
    widened, notes = widen_float_casts(sql)
    assert widened == ("SELECT a::DOUBLE, b :: DOUBLE, CAST(c AS DOUBLE), TRY_CAST(d AS DOUBLE), 1 AS real, "
                       "'x::float', \"float\" FROM t")
    assert len(notes) == 1 and "DOUBLE" in notes[0]
    assert widen_float_casts("SELECT a::double FROM t") == ("SELECT a::double FROM t", [])
