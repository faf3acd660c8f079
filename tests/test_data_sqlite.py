"""SQLite through Python's sqlite3: Chinese names, views, typeless columns, corrupt files, no network."""

import pytest

from datasolver.data import Catalog
from tests.helpers.datafiles import sqlite_file, write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_chinese_table_names_views_and_types(tmp_path):
    writer = sqlite_file(
        {
            "公募基金经理(新)": ("姓名 TEXT, 年限 INTEGER, 规模 REAL, 代码 TEXT", [("张三", 5, 12.5, "000001"), ("李四", 3, 8.0, "000002")]),
            "loose": ("a, b", [(1, "x"), ("two", 2.5), (None, b"\x00\x01")]),
        },
        views={"资深经理": 'SELECT 姓名 FROM "公募基金经理(新)" WHERE 年限 > 4'},
    )
    task = write_task(tmp_path, files={"db/funds.db": writer})
    with Catalog.open(task) as cat:
        assert sorted(cat.names()) == ["loose", "公募基金经理_新_", "资深经理"]
        result = cat.query('SELECT 姓名, 年限, 规模, 代码 FROM "公募基金经理(新)" ORDER BY 年限')
        assert result.rows == [("李四", 3, 8.0, "000002"), ("张三", 5, 12.5, "000001")]
        assert result.types == ["VARCHAR", "BIGINT", "DOUBLE", "VARCHAR"]
        assert cat.query("SELECT * FROM 资深经理").rows == [("张三",)]
        # typeless + mixed values: kept exactly, as text
        assert cat.query("SELECT a, b FROM loose").rows == [("1", "x"), ("two", "2.5"), (None, "\x00\x01")]


def test_corrupt_sqlite_is_reported_and_others_load(tmp_path):
    task = write_task(tmp_path, files={
        "db/corrupt.db": b"SQLite format 3\x00" + b"\x13" * 4000,
        "db/garbage.sqlite": b"this is not a database at all" * 50,
        "db/good.db": sqlite_file({"t": ("x INTEGER", [(1,)])}),
    })
    with Catalog.open(task) as cat:
        assert cat.query("SELECT x FROM t").rows == [(1,)]
        paths = {s.path.split(" ")[0] for s in cat.skipped}
        assert paths == {"db/corrupt.db", "db/garbage.sqlite"}


def test_no_duckdb_extension_is_installed_or_loaded(tmp_path):
    task = write_task(tmp_path, files={"db/a.db": sqlite_file({"t": ("x", [(1,)])})})
    with Catalog.open(task) as cat:
        cat.load()
        assert cat.query("SELECT x FROM t").rows == [(1,)]
        # On the query connection, read as the engine's own SQL: a user's query may not read settings (the guard).
        settings = cat.own_rows(
            "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions'),"
            " current_setting('enable_external_access')"
        )
        assert settings == [(False, False, False)]
