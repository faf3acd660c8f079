"""compact_error on real DuckDB errors: one line, kind kept, hints kept, caret → token."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from datasolver.data.duck_errors import MAX_CHARS, compact_error

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    c.execute('CREATE TABLE t (a INTEGER, b VARCHAR, "营业总收入" DOUBLE)')
    c.execute("INSERT INTO t VALUES (1, 'x', 2.5)")
    yield c
    c.close()


def _error(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Error:
    with pytest.raises(duckdb.Error) as info:
        con.execute(sql).fetchall()
    return info.value


def test_unknown_column_keeps_candidates_and_points_at_the_token(con: duckdb.DuckDBPyConnection) -> None:
    sql = 'SELECT "营业 总收入" FROM t'
    msg = compact_error(_error(con, sql), sql)
    assert msg == (
        'Binder Error: Referenced column "营业 总收入" not found in FROM clause! '
        'Candidate bindings: "营业总收入" (line 1: "SELECT "营业 总收入" FROM t" at ""营业 总收入"")'
    )


def test_unknown_table_keeps_did_you_mean(con: duckdb.DuckDBPyConnection) -> None:
    msg = compact_error(_error(con, "SELECT * FROM tt"))
    assert msg.startswith("Catalog Error: Table with name tt does not exist!")
    assert 'Did you mean "t"?' in msg and 'at "tt"' in msg
    assert "\n" not in msg and "LINE 1" not in msg and "^" not in msg


def test_syntax_error_shows_where(con: duckdb.DuckDBPyConnection) -> None:
    msg = compact_error(_error(con, "SELECT * FROM t LIMIT 1, 2"))
    assert msg == 'Parser Error: syntax error at or near "," (line 1: "SELECT * FROM t LIMIT 1, 2" at ",")'


def test_conversion_error_names_the_column_and_expression(con: duckdb.DuckDBPyConnection) -> None:
    msg = compact_error(_error(con, "SELECT CAST(b AS INTEGER) FROM t"))
    assert msg.startswith("Conversion Error: Could not convert string 'x' to INT32")
    assert msg.endswith('at "CAST(b AS INTEGER)")')


def test_long_candidate_function_lists_are_cut(con: duckdb.DuckDBPyConnection) -> None:
    err = _error(con, "SELECT sum(b) FROM t")
    assert str(err).count("\tsum(") > 3  # DuckDB lists every overload
    msg = compact_error(err)
    assert msg.count("sum(arg") == 3 and "more)" in msg
    assert len(msg) <= MAX_CHARS


def test_error_on_a_later_line_of_a_long_query(con: duckdb.DuckDBPyConnection) -> None:
    sql = "SELECT\n  a,\n  zz\nFROM t WHERE " + " AND ".join(f"a <> {i}" for i in range(80))
    msg = compact_error(_error(con, sql), sql)
    assert '(line 3: "zz" at "zz")' in msg
    wide = compact_error(_error(con, "SELECT a FROM t WHERE " + " AND ".join(f"a <> {i}" for i in range(80)) + " AND zz = 1"))
    assert 'at "zz"' in wide and len(wide) <= MAX_CHARS


def test_every_message_fits_and_is_one_line(con: duckdb.DuckDBPyConnection) -> None:
    huge = "SELECT " + ", ".join(f"col_{i}" for i in range(300)) + " FROM t"
    for sql in (huge, "SELECT strptime('x', '%Y')", "SELEC 1", "SELECT 'abc"):
        msg = compact_error(_error(con, sql), sql)
        assert len(msg) <= MAX_CHARS and "\n" not in msg
        assert msg.split(":")[0].endswith("Error")


def test_non_duckdb_exceptions_get_their_type_name() -> None:
    assert compact_error(ValueError("bad value\nsecond line")) == "ValueError: bad value second line"
    assert compact_error(RuntimeError()) == "RuntimeError"


def test_carets_after_wide_characters_point_at_the_right_token(con: duckdb.DuckDBPyConnection) -> None:
    # DuckDB places carets by display width: each CJK character counts two columns
    msg = compact_error(_error(con, 'SELECT "营业总收入", "营业\u3000总收入", zz FROM t'))
    assert msg.endswith('at ""营业\u3000总收入"")')
    assert compact_error(_error(con, 'SELECT "营业总收入", zz FROM t')).endswith('at "zz")')
