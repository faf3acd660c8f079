"""Deterministic SQL repair: each stage alone, then the driver against a real DuckDB."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from datasolver.data.rules.bare_columns import quote_bare_columns
from datasolver.data.rules.bracket_names import quote_brackets_and_backticks
from datasolver.data.rules.other_dialect import detect_dialects, transpile_dialect
from datasolver.data.rules.spaced_columns import fix_whitespace_columns
from datasolver.data.sql_repair import RepairAttempt, execute_with_repair
from datasolver.data.sql_tokens import tokenize

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

# --------------------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 'it''s [x]', \"a\"\"b\", `c`, E'\\'[y]' -- [z]\n/* [w] /* nested */ */ FROM t",
        "SELECT $$ [q] 'x $$, $tag$ \" $tag$, $1",
        "SELECT 'unterminated [x]",
    ],
)
def test_tokens_rebuild_the_input_exactly(sql: str) -> None:
    assert "".join(t.text for t in tokenize(sql)) == sql


def test_tokenizer_keeps_brackets_inside_literals_and_comments_out_of_reach() -> None:
    sql = "SELECT 'a [b] c', E'x\\'[d]' /* [e] /* [f] */ [g] */ -- [h]\n"
    kinds = {t.kind for t in tokenize(sql) if "[" in t.text}
    assert kinds == {"string", "comment"}


# --------------------------------------------------------------------------- stage 1


@pytest.mark.parametrize(
    ("sql", "expected", "notes"),
    [
        ("SELECT [公司名称] FROM t", 'SELECT "公司名称" FROM t', ['[公司名称] → "公司名称"']),
        ("SELECT TOP 5 [绿化率(%)] FROM [表 1]", 'SELECT TOP 5 "绿化率(%)" FROM "表 1"', None),
        ("SELECT `时间(月份)` FROM t", 'SELECT "时间(月份)" FROM t', ['`时间(月份)` → "时间(月份)"']),
        ("SELECT `a\"b` FROM t", 'SELECT "a""b" FROM t', None),
        ("SELECT CASE WHEN x THEN [a] END FROM t", 'SELECT CASE WHEN x THEN "a" END FROM t', None),
    ],
)
def test_brackets_and_backticks_become_double_quotes(sql: str, expected: str, notes: list[str] | None) -> None:
    out, got_notes = quote_brackets_and_backticks(sql)
    assert out == expected
    if notes is not None:
        assert got_notes == notes


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT x[1], f(a)[2], \"c\"[1], l[2:3], m[i] FROM t",  # subscripts and slices
        "SELECT [1, 2], ['a'], [], [ 3 ], [x FOR x IN l] FROM t",  # list literals
        "SELECT '[公司名称]', \"[a]\" FROM t -- [b]",  # inside strings, names, comments
        "SELECT [[1]] FROM t",  # nested lists
    ],
)
def test_list_literals_indexing_and_literals_are_left_alone(sql: str) -> None:
    assert quote_brackets_and_backticks(sql) == (sql, [])


# --------------------------------------------------------------------------- stage 2

COLUMNS = ["营业总收入", "时间(月份)", "a b", "ab", "name"]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ('SELECT "营业 总收入" FROM t', 'SELECT "营业总收入" FROM t'),
        ('SELECT "营业\u3000总收入" FROM t', 'SELECT "营业总收入" FROM t'),  # full-width space
        ('SELECT t."营业 总 收入\t" FROM t', 'SELECT t."营业总收入" FROM t'),
        ('SELECT "时间 (月份)" FROM t', 'SELECT "时间(月份)" FROM t'),
    ],
)
def test_whitespace_variant_maps_to_the_one_real_column(sql: str, expected: str) -> None:
    out, notes = fix_whitespace_columns(sql, COLUMNS)
    assert out == expected
    assert len(notes) == 1 and notes[0].startswith("column ")


@pytest.mark.parametrize(
    "sql",
    [
        'SELECT "a  b" FROM t',  # "ab" and "a b" both match once spaces go: ambiguous
        'SELECT "营业收入" FROM t',  # no real column: not ours to guess
        'SELECT "NAME", "a b" FROM t',  # already real (DuckDB names ignore case)
        "SELECT '营业 总收入' FROM t",  # a string literal, not a name
    ],
)
def test_ambiguous_unmatched_and_exact_names_stay(sql: str) -> None:
    assert fix_whitespace_columns(sql, COLUMNS) == (sql, [])


# --------------------------------------------------------------------------- stage 3


@pytest.mark.parametrize(
    ("sql", "first"),
    [
        ("SELECT TOP 5 a FROM t", "tsql"),
        ("SELECT ISNULL(a, 0), LEN(b) FROM t", "tsql"),
        ("SELECT a FROM t LIMIT 2, 5", "sqlite"),  # shared with MySQL; SQLite reads quotes safely
        ("SELECT GROUP_CONCAT(a SEPARATOR ',') FROM t", "mysql"),
        ("SELECT DATE_FORMAT(d, '%Y') FROM t", "mysql"),
        ("SELECT strftime('%Y', d) FROM t", "sqlite"),
    ],
)
def test_telltales_pick_the_dialect(sql: str, first: str) -> None:
    assert detect_dialects(sql)[0] == first


def test_no_telltale_means_no_transpile() -> None:
    assert detect_dialects("SELECT a FROM t WHERE b = 1") == []
    assert transpile_dialect("SELECT a FROM t WHERE b = 1") == []
    # DuckDB's own strftime order is not an SQLite telltale
    assert detect_dialects("SELECT strftime(d, '%Y') FROM t") == []


def test_transpile_rewrites_tsql_mysql_and_sqlite() -> None:
    assert transpile_dialect("SELECT TOP 3 [名称], ISNULL(x, 0) FROM t") == [
        ("tsql", 'SELECT "名称", COALESCE(x, 0) FROM t LIMIT 3')
    ]
    assert transpile_dialect("SELECT a FROM t LIMIT 1, 2")[0] == ("sqlite", "SELECT a FROM t LIMIT 2 OFFSET 1")
    mysql = dict(transpile_dialect("SELECT GROUP_CONCAT(b SEPARATOR ';') FROM t"))
    assert mysql["mysql"] == "SELECT LISTAGG(b, ';') FROM t"


def test_mysql_read_keeps_regex_backslashes_and_column_names() -> None:
    sql = 'SELECT DATE_FORMAT("时间", \'%Y\') FROM t WHERE regexp_matches("名称", \'^\\d+$\') AND k = "x"'
    [(dialect, out)] = transpile_dialect(sql, columns=["时间", "名称"])
    assert dialect == "mysql"
    assert "'^\\d+$'" in out  # the backslash survived the MySQL reader
    assert '"时间"' in out and '"名称"' in out  # real columns stay names
    assert "k = 'x'" in out  # an unknown "x" is a MySQL string


def test_duckdb_lists_and_concat_are_never_transpiled() -> None:
    assert transpile_dialect("SELECT l[1], IFNULL(a, 0) FROM t LIMIT 1, 2") == []
    assert [d for d, _ in transpile_dialect("SELECT a || b, IFNULL(a, 0) FROM t LIMIT 1, 2")] == ["sqlite"]


# --------------------------------------------------------------------------- driver


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    c.execute(
        'CREATE TABLE "公司" ("公司名称" VARCHAR, "营业总收入" DOUBLE, "时间(月份)" VARCHAR, "绿化率(%)" DOUBLE, d DATE)'
    )
    c.execute(
        """INSERT INTO "公司" VALUES
        ('甲', 10.0, '2020-01', 0.3, DATE '2020-01-05'),
        ('乙', 30.0, '2020-02', NULL, DATE '2021-03-01'),
        ('丙', 20.0, '2020-03', 0.5, DATE '2021-07-09')"""
    )
    yield c
    c.close()


def _runner(con: duckdb.DuckDBPyConnection, calls: list[str]):
    def run(sql: str) -> list[tuple]:
        calls.append(sql)
        return con.execute(sql).fetchall()

    return run


def _columns(con: duckdb.DuckDBPyConnection, counter: list[int]):
    def columns() -> list[str]:
        counter.append(1)
        return [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns()").fetchall()]

    return columns


def test_working_sql_runs_once_untouched_and_columns_are_not_listed(con: duckdb.DuckDBPyConnection) -> None:
    calls: list[str] = []
    listed: list[int] = []
    sql = 'SELECT "公司名称" FROM "公司" ORDER BY "营业总收入" DESC LIMIT 1'
    out = execute_with_repair(sql, _runner(con, calls), _columns(con, listed))
    assert (out.value, out.sql, out.rewrites) == ([("乙",)], sql, [])
    assert calls == [sql] and listed == []


def test_brackets_and_stray_space_are_repaired(con: duckdb.DuckDBPyConnection) -> None:
    listed: list[int] = []
    out = execute_with_repair(
        'SELECT [公司名称], "营业\u3000总收入" FROM [公司] ORDER BY 2 DESC LIMIT 1',
        _runner(con, []),
        _columns(con, listed),
    )
    assert out.value == [("乙", 30.0)]
    assert out.sql == 'SELECT "公司名称", "营业总收入" FROM "公司" ORDER BY 2 DESC LIMIT 1'
    assert out.rewrites == [
        '[公司名称] → "公司名称"',
        '[公司] → "公司"',
        'column "营业\u3000总收入" → "营业总收入"',
    ]
    assert listed == [1]  # listed lazily, once


def test_backticks_that_duckdb_accepts_are_not_rewritten(con: duckdb.DuckDBPyConnection) -> None:
    out = execute_with_repair("SELECT `公司名称` FROM `公司` LIMIT 1", _runner(con, []), lambda: [])
    assert out.rewrites == []


def test_tsql_query_is_transpiled_and_whitespace_fixed(con: duckdb.DuckDBPyConnection) -> None:
    out = execute_with_repair(
        "SELECT TOP 2 [公司名称], ISNULL([绿化率(%)], 0) AS g FROM [公司] ORDER BY [营业 总收入] DESC",
        _runner(con, []),
        _columns(con, []),
    )
    assert out.value == [("乙", 0.0), ("丙", 0.5)]
    assert out.rewrites == ["transpiled from tsql", 'column "营业 总收入" → "营业总收入"']


def test_limit_offset_comma_and_sqlite_strftime_are_transpiled(con: duckdb.DuckDBPyConnection) -> None:
    run = _runner(con, [])
    # code points sort 丙 < 乙 < 甲, so offset 1 is 乙
    limit = execute_with_repair('SELECT "公司名称" FROM "公司" ORDER BY 1 LIMIT 1, 1', run, _columns(con, []))
    assert limit.value == [("乙",)] and limit.rewrites == ["transpiled from sqlite"]
    year = execute_with_repair(
        "SELECT strftime('%Y', \"时间(月份)\" || '-01') AS y, COUNT(*) FROM \"公司\" GROUP BY y",
        run,
        _columns(con, []),
    )
    assert year.value == [("2020", 3)] and year.rewrites == ["transpiled from sqlite"]


def test_unfixable_sql_reraises_the_original_error_with_attempts(con: duckdb.DuckDBPyConnection) -> None:
    calls: list[str] = []
    with pytest.raises(duckdb.BinderException, match="营业收入") as info:
        execute_with_repair('SELECT [公司名称], "营业收入" FROM "公司"', _runner(con, calls), _columns(con, []))
    attempts = info.value.repair_attempts  # type: ignore[attr-defined]
    assert attempts and all(isinstance(a, RepairAttempt) for a in attempts)
    assert attempts[0].rewrites == ('[公司名称] → "公司名称"',)
    assert calls[0] == 'SELECT [公司名称], "营业收入" FROM "公司"'  # the SQL as given ran first


def test_interrupt_is_not_retried() -> None:
    calls: list[str] = []

    def run(sql: str) -> None:
        calls.append(sql)
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    with pytest.raises(duckdb.InterruptException):
        execute_with_repair("SELECT [a] FROM t LIMIT 1, 2", run, lambda: ["a"])
    assert calls == ["SELECT [a] FROM t LIMIT 1, 2"]


def test_a_column_written_bare_with_parentheses_is_quoted_and_runs(con: duckdb.DuckDBPyConnection) -> None:
    # As the real 1.5B model wrote it (task_retqa_v256): DuckDB read 时间(月份) as a call of 时间.
    sql = "SELECT count(*) FROM \"公司\" WHERE 时间(月份) = '2020-02' AND 绿化率(%) IS NULL"
    with pytest.raises(duckdb.Error):
        con.execute(sql)
    out = execute_with_repair(sql, _runner(con, []), _columns(con, []))
    assert out.value == [(1,)]
    assert out.rewrites == ['column 时间(月份) → "时间(月份)"', 'column 绿化率(%) → "绿化率(%)"']


def test_bare_column_quoting_leaves_strings_quoted_names_and_longer_words_alone() -> None:
    columns = ["时间(月份)", "plain"]
    sql = "SELECT \"时间(月份)\", '时间(月份)', x时间(月份) FROM t -- 时间(月份)\nWHERE plain = 1"
    assert quote_bare_columns(sql, columns) == (sql, [])
    assert quote_bare_columns("SELECT 时间(月份) FROM t", ["plain"]) == ("SELECT 时间(月份) FROM t", [])


def test_a_bare_name_typed_with_ascii_parentheses_finds_the_full_width_column() -> None:
    # The real model typed the schema's 时间（月份） with ASCII parentheses (task_retqa_v2854).
    con = duckdb.connect()
    con.execute('CREATE TABLE p ("时间（月份）" VARCHAR, "成交均价" DOUBLE)')
    con.execute("INSERT INTO p VALUES ('2020-03', 1.5)")
    columns = ["时间（月份）", "成交均价"]
    out = execute_with_repair("SELECT 成交均价 FROM p WHERE 时间(月份) = '2020-03'", _runner(con, []), lambda: columns)
    assert out.value == [(1.5,)] and out.rewrites == ['column 时间(月份) → "时间（月份）"']
    # A column spelled with ASCII parentheses as well: the name as typed is that column.
    assert quote_bare_columns("SELECT 时间(月份) FROM p", ["时间(月份)", "时间（月份）"])[0] == 'SELECT "时间(月份)" FROM p'


# --------------------------------------------------------------------------- double-quoted values


def _projects() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute('CREATE TABLE p ("项目名称" VARCHAR, "金额" BIGINT, "城市" VARCHAR)')
    con.execute("INSERT INTO p VALUES ('华润置地未来城市', 5, '成都'), ('其他', 3, '重庆'), ('成都', 7, '成都')")
    return con


def _text_columns(con: duckdb.DuckDBPyConnection):
    return lambda: [r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE data_type = 'VARCHAR'").fetchall()]


def test_a_double_quoted_value_compared_with_a_text_column_becomes_a_string() -> None:
    # As the real 1.5B model wrote it: DuckDB read "华润置地未来城市" as a column and failed.
    con = _projects()
    sql = 'SELECT "金额" FROM p WHERE "项目名称" = "华润置地未来城市"'
    out = execute_with_repair(sql, _runner(con, []), _columns(con, []), _text_columns(con))
    assert out.value == [(5,)]
    assert out.sql == "SELECT \"金额\" FROM p WHERE \"项目名称\" = '华润置地未来城市'"
    assert out.rewrites == ["\"华润置地未来城市\" → '华润置地未来城市' (a text value: no column has that name)"]
    listed = execute_with_repair('SELECT sum("金额") FROM p WHERE 项目名称 NOT IN ("其他", "成都")',
                                 _runner(con, []), _columns(con, []), _text_columns(con))
    assert listed.value == [(5,)] and len(listed.rewrites) == 2


@pytest.mark.parametrize("sql", [
    'SELECT * FROM p WHERE "项目名称" = "城市"',  # both are columns: a comparison of two columns
    'SELECT * FROM p WHERE "城市" = "项目名称" AND nope = 1',  # fails for `nope`; both are columns
    'SELECT "项目名称" AS "甲" FROM p WHERE "甲" = "x"',  # "甲" is the query's alias
    'SELECT * FROM p WHERE "金额" = "五"',  # 金额 is a number: no string repair
    'SELECT * FROM p WHERE p."华润" = "项目名称"',  # qualified: a name
    'SELECT "华润置地未来城市" FROM p',  # not compared: a misspelt column
])
def test_a_double_quoted_name_that_is_a_column_or_not_compared_with_text_is_never_made_a_string(sql: str) -> None:
    from datasolver.data.rules.text_values import quote_text_values

    con = _projects()
    assert quote_text_values(sql, _columns(con, [])(), _text_columns(con)()) == (sql, [])


def test_a_double_quoted_value_that_cannot_be_repaired_gets_a_hint(tmp_path) -> None:
    from datasolver.data import Catalog, QueryError
    from tests.helpers.datafiles import write_task

    task = write_task(tmp_path, files={"csv/p.csv": "name,amount\nfoo,1\n"})
    with Catalog.open(task) as catalog:
        assert catalog.query('SELECT amount FROM p WHERE name = "foo"').rows == [(1,)]
        with pytest.raises(QueryError) as err:
            catalog.query('SELECT name FROM p WHERE amount = "one"')
        assert str(err.value).endswith(
            "(hint: \"one\" in double quotes is a column name; a text value is written in single quotes: 'one')")
        with pytest.raises(QueryError) as misspelt:
            catalog.query('SELECT "nme" FROM p')
        assert "hint" not in str(misspelt.value)  # not compared as a value: a misspelt name


def test_isnull_reads_by_its_arguments() -> None:
    assert detect_dialects("SELECT ISNULL(x) FROM t") == ["mysql"]
    assert detect_dialects("SELECT ISNULL(x, 0) FROM t") == ["tsql"]
    assert detect_dialects("SELECT ISNULL(coalesce(a, b)) FROM t") == ["mysql"]
    assert detect_dialects("SELECT ISNULL(f(a, b), g(c)) FROM t") == ["tsql"]


def test_when_a_rewrite_gets_past_the_parser_its_error_is_the_one_raised(con: duckdb.DuckDBPyConnection) -> None:
    # As the real 1.5B model wrote it (benchmark task v2640): the bare 绿化率(%) made DuckDB say "syntax
    # error at or near ')'", so the model's repair wrote the same query again; quoted, the query reaches
    # its real fault (a column of another table), which is what the model must be told.
    sql = "SELECT 绿化率(%) FROM \"公司\" WHERE 项目名称 = '甲'"
    with pytest.raises(duckdb.ParserException):
        con.execute(sql)
    with pytest.raises(duckdb.BinderException) as info:
        execute_with_repair(sql, _runner(con, []), _columns(con, []))
    message = str(info.value)
    assert "项目名称" in message and "syntax error" not in message
    assert message.endswith('(the error of the query once rewritten: column 绿化率(%) → "绿化率(%)")')
    assert info.value.repair_attempts[0].rewrites == ('column 绿化率(%) → "绿化率(%)"',)  # type: ignore[attr-defined]


def test_a_query_that_no_rewrite_gets_past_the_parser_keeps_its_own_error(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(duckdb.ParserException, match="syntax error"):
        execute_with_repair("SELECT 绿化率(%) FROM \"公司\" WHERE", _runner(con, []), _columns(con, []))
