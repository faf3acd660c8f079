"""Read-only guard: DuckDB's parser decides; the locked read-only connection backs it up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from datasolver.data.errors import ReadOnlyViolation, SqlSyntaxError
from datasolver.data.guard import check_read_only, locked_connection_config

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t",
        "WITH x AS (SELECT 1 AS a) SELECT * FROM x",
        "SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3",
        "(SELECT 1) INTERSECT (SELECT 1)",
        "VALUES (1), (2)",
        "FROM t SELECT a",
        "DESCRIBE t",
        "DESC SELECT 1",
        "SHOW TABLES",
        "SHOW t",
        "SUMMARIZE t",
        "EXPLAIN SELECT 1",
        "EXPLAIN ANALYZE SELECT a FROM t",
        "EXPLAIN (FORMAT json) SELECT 1",
        "PRAGMA table_info('t')",
        "PRAGMA show_tables",
        "PRAGMA database_size",
        "PIVOT t ON a USING sum(b)",  # parses as MULTI; still a read
        "PIVOT t ON a IN ('x') USING sum(b)",
        # words that name statements, as columns, names and strings
        "SELECT update, \"delete\", 'load data; drop table t' AS note, read_count FROM t WHERE \"insert\" = 'copy'",
        'SELECT * FROM "公司(2020)" AS "a.b"',
        # DuckDB cannot parse these; repair and execution report the real error
        "SELECT TOP 5 [公司名称] FROM t",
        "SELECT * FROM t LIMIT 1, 2",
    ],
)
def test_reads_pass(sql: str) -> None:
    check_read_only(sql)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("INSERT INTO t VALUES (1)", "INSERT"),
        ("UPDATE t SET a = 1", "UPDATE"),
        ("DELETE FROM t", "DELETE"),
        ("WITH x AS (SELECT 1) DELETE FROM t", "DELETE"),
        ("CREATE TABLE x AS SELECT 1", "CREATE"),
        ("CREATE TEMP VIEW v AS SELECT 1", "CREATE"),
        ("CREATE TABLE p AS PIVOT t ON a USING sum(b)", "CREATE"),
        ("DROP TABLE t", "DROP"),
        ("ALTER TABLE t ADD COLUMN c INT", "ALTER"),
        ("COPY t TO 'out.csv'", "COPY"),
        ("EXPORT DATABASE 'dir'", "EXPORT"),
        ("ATTACH 'other.db'", "ATTACH"),
        ("DETACH other", "DETACH"),
        ("INSTALL sqlite", "INSTALL"),
        ("LOAD sqlite", "LOAD"),
        ("SET threads = 1", "SET"),
        ("RESET threads", "SET"),
        ("PRAGMA threads = 4", "SET"),
        ("USE other", "USE"),
        ("CHECKPOINT", "CHECKPOINT"),
        ("CALL pragma_table_info('t')", "CALL"),
        ("BEGIN", "TRANSACTION"),
        ("SELECT 1; DROP TABLE t", "DROP"),
        ("EXPLAIN ANALYZE DELETE FROM t", "DELETE"),
        ("UPDATE TOP (1) t SET a = 1", "UPDATE"),  # unparsable, still not a read
        ("SELECT TOP 1 a FROM t; DELETE TOP (1) FROM t", "DELETE"),
    ],
)
def test_writes_and_settings_are_rejected_by_kind(sql: str, named: str) -> None:
    with pytest.raises(ReadOnlyViolation, match=named) as info:
        check_read_only(sql)
    assert "Allowed: SELECT" in str(info.value)


@pytest.mark.parametrize("sql", ["PRAGMA enable_profiling", "PRAGMA storage_info('t')", "PRAGMA force_checkpoint"])
def test_only_informational_pragmas_pass(sql: str) -> None:
    with pytest.raises(ReadOnlyViolation, match="read-only PRAGMAs: .*table_info"):
        check_read_only(sql)


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("SELECT * FROM read_csv('/etc/passwd')", r"read_csv\(\)"),
        ("SELECT * FROM t WHERE a IN (SELECT x FROM read_json_auto('a.json'))", r"read_json_auto\(\)"),
        ("WITH c AS (SELECT * FROM read_parquet('a')) SELECT * FROM c", r"read_parquet\(\)"),
        ("SELECT * FROM glob('*')", r"glob\(\)"),
        ("SELECT * FROM read_text('/etc/passwd')", r"read_text\(\)"),
        ("SELECT * FROM sqlite_scan('x.db', 't')", r"sqlite_scan\(\)"),
        ("SELECT * FROM query('SELECT 1')", r"query\(\)"),
        ("DESCRIBE SELECT * FROM read_blob('x')", r"read_blob\(\)"),
        ("PIVOT read_csv('x') ON a USING sum(b)", r"read_csv\(\)"),
        ("SELECT TOP 1 * FROM read_csv('x')", r"read_csv\(\)"),  # unparsable: token scan
        ("SELECT * FROM '/etc/passwd'", "would read a file"),
        ('SELECT * FROM "data.csv"', "would read a file"),
    ],
)
def test_file_reads_get_a_friendly_message(sql: str, named: str) -> None:
    with pytest.raises(ReadOnlyViolation, match=named) as info:
        check_read_only(sql)
    assert "SHOW TABLES" in str(info.value)


@pytest.mark.parametrize("sql", ["", "   ", " ; ;", "-- just a comment\n/* and another */"])
def test_empty_sql_is_rejected_clearly(sql: str) -> None:
    with pytest.raises(ReadOnlyViolation, match="empty SQL"):
        check_read_only(sql)


# --------------------------------------------------------------------------- the connection


@pytest.mark.parametrize("sql, suggestion", [("SELEC * FRM x", "SELECT"), ("WTIH x AS (SELECT 1) SELECT 1", "WITH"),
                                              ("frobnicate the table", None)])
def test_a_statement_without_a_statement_keyword_is_a_syntax_error(sql: str, suggestion: str | None) -> None:
    with pytest.raises(SqlSyntaxError, match="^syntax error at ") as caught:
        check_read_only(sql)
    assert (f"did you mean {suggestion}?" in str(caught.value)) if suggestion else "did you mean" not in str(caught.value)


@pytest.mark.parametrize("sql", ["SELEC 1; DELETE FROM t", "INSERT INTO t VALUE (1", "UPDTE t; DROP TABLE t WHERE"])
def test_an_unparsable_write_is_still_refused_as_a_write(sql: str) -> None:
    with pytest.raises(ReadOnlyViolation):
        check_read_only(sql)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cache file as the Catalog builds it, reopened read-only with the locked config."""
    path = tmp_path / "cache.duckdb"
    with duckdb.connect(str(path)) as rw:
        rw.execute('CREATE TABLE t (a INTEGER, "营业总收入" DOUBLE)')
        rw.execute("INSERT INTO t VALUES (1, 2.5), (2, 3.0)")
    (tmp_path / "data.csv").write_text("a\n1\n")
    con = duckdb.connect(str(path), read_only=True, config=locked_connection_config())
    yield con
    con.close()


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE x (a INTEGER)",
        "INSERT INTO t VALUES (3, 1.0)",
        "UPDATE t SET a = 0",
        "COPY t TO '{tmp}/out.csv'",
        "ATTACH '{tmp}/other.duckdb' AS other",
        "INSTALL sqlite",
        "LOAD sqlite",
        "SET threads = 1",
        "SET enable_external_access = true",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_csv('{tmp}/data.csv')",
        "SELECT * FROM '{tmp}/data.csv'",
        "SELECT * FROM glob('/etc/*')",
    ],
)
def test_locked_read_only_connection_blocks_writes_files_and_settings(
    locked: duckdb.DuckDBPyConnection, tmp_path: Path, sql: str
) -> None:
    with pytest.raises(duckdb.Error):
        locked.execute(sql.format(tmp=tmp_path)).fetchall()
    assert not (tmp_path / "out.csv").exists()


def test_locked_connection_still_reads_and_keeps_temp_views(locked: duckdb.DuckDBPyConnection) -> None:
    assert locked.execute('SELECT sum("营业总收入") FROM t').fetchone() == (5.5,)
    locked.execute("CREATE TEMP VIEW v AS SELECT a * 10 AS b FROM t")
    assert locked.execute("SELECT b FROM v ORDER BY b").fetchall() == [(10,), (20,)]
    for sql in ("DESCRIBE t", "SHOW TABLES", "SUMMARIZE t", "PRAGMA table_info('t')", "PIVOT t ON a USING sum(a)"):
        check_read_only(sql)
        assert locked.execute(sql).fetchall()
    settings = dict(locked.execute("SELECT name, value FROM duckdb_settings()").fetchall())
    assert settings["enable_external_access"] == "false"
    assert settings["lock_configuration"] == "true"
    assert settings["access_mode"] == "read_only"
