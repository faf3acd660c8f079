"""CSV loading through the catalog: encodings, delimiters, whole-file typing, ragged rows."""

import pytest

from datasolver.data import Catalog
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _types(catalog, table):
    rows = catalog.query(f'DESCRIBE "{table}"', limit=100).rows
    return {r[0]: r[1] for r in rows}


@pytest.mark.parametrize(
    "encoding, raw",
    [
        ("gbk", "名称,金额\n公司甲,12.5\n公司乙,3\n".encode("gbk")),
        ("gb18030", "名称,金额\n公司甲,12.5\n𠀀公司,3\n".encode("gb18030")),
        ("utf-8-sig", "\ufeff名称,金额\n公司甲,12.5\n公司乙,3\n".encode("utf-8")),
        ("utf-16", "名称,金额\n公司甲,12.5\n公司乙,3\n".encode("utf-16")),
    ],
)
def test_encodings_keep_chinese_headers_and_values(tmp_path, encoding, raw):
    task = write_task(tmp_path, files={"csv/公司.csv": raw})
    with Catalog.open(task) as cat:
        result = cat.query("SELECT 名称, 金额 FROM 公司 ORDER BY 金额")
        assert result.columns == ["名称", "金额"]
        assert result.rows[0][1] == 3.0 and result.rows[1][1] == 12.5
        assert result.rows[1][0] == "公司甲"
        assert _types(cat, "公司")["金额"] == "DOUBLE"


def test_gbk_file_with_long_ascii_head_is_still_detected(tmp_path):
    body = "id,name\n" + "".join(f"{i},abc\n" for i in range(30000)) + "30000,中文\n"
    task = write_task(tmp_path, files={"csv/t.csv": body.encode("gbk")})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT name FROM t WHERE id = 30000").rows == [("中文",)]


@pytest.mark.parametrize("delim", [",", ";", "\t", "|"])
def test_delimiter_sniffing(tmp_path, delim):
    text = delim.join(["a", "b c", "d"]) + "\n" + delim.join(["1", "x, y" if delim != "," else '"x, y"', "3"]) + "\n"
    task = write_task(tmp_path, files={"csv/d.csv": text})
    with Catalog.open(task) as cat:
        result = cat.query('SELECT * FROM d')
        assert result.columns == ["a", "b c", "d"]
        assert result.rows == [(1, "x, y", 3)]


def test_whole_file_type_inference_and_leading_zero_codes(tmp_path):
    rows = [f"{i:06d},{i},{i}.5,2024-01-{1 + i % 28:02d},true" for i in range(1, 30000)]
    rows.append("000123,late_text,7.25,2024-02-30,false")  # late bad values: int col, date col
    task = write_task(tmp_path, files={"csv/big.csv": "code,n,x,day,flag\n" + "\n".join(rows) + "\n"})
    with Catalog.open(task) as cat:
        types = _types(cat, "big")
        assert types == {"code": "VARCHAR", "n": "VARCHAR", "x": "DOUBLE", "day": "VARCHAR", "flag": "BOOLEAN"}
        assert cat.query("SELECT count(*) FROM big").rows == [(30000,)]  # no row dropped
        assert cat.query("SELECT code FROM big WHERE n = 'late_text'").rows == [("000123",)]


def test_types_int_date_timestamp_and_blanks(tmp_path):
    text = "i,d,ts,mixed,blank\n1,2024-01-02,2024-01-02 03:04:05,2024-01-02,\n,2024-02-03,2024-02-03T04:05:06,2024-01-02 10:00:00,\n"
    task = write_task(tmp_path, files={"t.csv": text})
    with Catalog.open(task) as cat:
        assert _types(cat, "t") == {"i": "BIGINT", "d": "DATE", "ts": "TIMESTAMP", "mixed": "TIMESTAMP", "blank": "VARCHAR"}
        assert cat.query("SELECT i FROM t WHERE i IS NULL").total_rows == 1


def test_huge_integers_stay_exact_text(tmp_path):
    task = write_task(tmp_path, files={"t.csv": "id\n123456789012345678901234\n5\n"})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT id FROM t ORDER BY id").rows == [("123456789012345678901234",), ("5",)]


def test_ragged_rows_load_what_parses_and_report_the_rest(tmp_path):
    text = 'a,b,c\n1,2,3\n4,5\n6,7,8,9\n"x, y",10,11\n"multi\nline",12,13\n'
    task = write_task(tmp_path, files={"csv/r.csv": text, "csv/ok.csv": "z\n1\n"})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT a FROM r ORDER BY c").rows == [("1",), ("x, y",), ("multi\nline",)]
        notes = [n.reason for n in cat.notes if n.path == "csv/r.csv"]
        assert notes and "2 row(s) with the wrong number of fields" in notes[0]
        assert cat.query("SELECT z FROM ok").rows == [(1,)]


def test_undecodable_bytes_are_replaced_and_reported(tmp_path):
    raw = b"name,v\nok,1\n\xff\xfe\xfd\xfc\x80bad,2\n"
    task = write_task(tmp_path, files={"csv/bad.csv": raw})
    with Catalog.open(task) as cat:
        assert cat.query("SELECT v FROM bad ORDER BY v").rows == [(1,), (2,)]
        assert any("undecodable bytes" in n.reason for n in cat.notes)


def test_empty_and_header_only_files(tmp_path):
    task = write_task(tmp_path, files={"csv/empty.csv": "", "csv/head.csv": "a,b\n", "csv/ok.csv": "a\n1\n"})
    with Catalog.open(task) as cat:
        skipped = {s.path: s.reason for s in cat.skipped}
        assert skipped == {"csv/empty.csv": "empty file"}
        assert cat.query("SELECT * FROM head").total_rows == 0
        assert cat.query("SELECT * FROM ok").rows == [(1,)]


def test_awkward_file_names(tmp_path):
    files = {
        "csv/2024 Sales (final).csv": "a\n1\n",
        "csv/公司名单(最终).csv": "a\n2\n",
        "csv/emoji 😀.csv": "a\n3\n",
    }
    task = write_task(tmp_path, files=files)
    with Catalog.open(task) as cat:
        assert sorted(cat.names()) == ["emoji__", "t_2024_sales__final_", "公司名单_最终_"]
        assert cat.query("SELECT a FROM t_2024_sales__final_").rows == [(1,)]
        assert cat.query('SELECT a FROM "公司名单(最终)"').rows == [(2,)]  # original name alias
        assert cat.query("SELECT a FROM emoji__").rows == [(3,)]


def test_columns_settled_as_text_early_get_the_types_the_full_check_gives(tmp_path, monkeypatch):
    # A column whose first values hold a character no check accepts is VARCHAR without asking
    # DuckDB; every other column still gets the whole-column check. Spaces DuckDB's trim() strips
    # (U+3000, U+00A0) and the letters of true/false, e, T must not settle a column as text.
    import pyarrow as pa

    import datasolver.data.infer_types as infer_types

    columns = {
        "cjk": ["北京", "1"], "zs_int": ["\u3000123", "\xa045 "], "sci": ["1e5", "-2.5E-3"],
        "bool": [" TRUE", "false"], "ts": ["2021-01-01T00:00:00", "2021-01-02 03:04"], "word": ["true", "x"],
        "tab": ["\t1", "2"], "kelvin": ["\u212a", "1"], "late": ["1"] * 1200 + ["abc"], "blank": ["", " "],
    }
    rows = max(len(v) for v in columns.values())
    lines = [",".join(columns)] + [",".join(v[i] if i < len(v) else "" for v in columns.values()) for i in range(rows)]
    task = write_task(tmp_path, files={"t.csv": "\n".join(lines) + "\n"})
    with Catalog.open(task) as cat:
        shortcut = _types(cat, "t")
    settled = {c for c, v in columns.items() if infer_types.surely_text(pa.chunked_array([v]))}
    monkeypatch.setattr(infer_types, "surely_text", lambda column, *more: False)
    with Catalog.open(write_task(tmp_path, name="task_2", files={"t.csv": "\n".join(lines) + "\n"})) as cat:
        full = _types(cat, "t")
    assert shortcut == full
    assert settled == {"cjk", "word", "tab", "kelvin"}  # "late" is text, but only past the head
    assert full["zs_int"] == "BIGINT" and full["bool"] == "BOOLEAN" and full["ts"] == "TIMESTAMP"
