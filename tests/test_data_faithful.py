"""Faithful loading, said wherever the data is used (issue 32, item 2).

Before: a Windows-1252 CSV whose accents are followed by letters was decoded as GB18030 with no note
(`Sault-au-R閏ollet`), another got U+FFFD and `LIKE '%é%'` found 0 of 13 rows; a ragged row was
skipped with a note only in `tables`; `;`-delimited decimal commas stayed text; a `.parquet` file was
not even listed; load notes reached neither `sql`, MCP, the analyst nor the agent's brief.
"""

from __future__ import annotations

import asyncio

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner
from mcp import Client

from datasolver.agent.tables import digest_tables
from datasolver.ask import AskToolbox, open_package
from datasolver.ask.tools import table_overview
from datasolver.cli import cli
from datasolver.data import Catalog
from datasolver.mcp_server import build_server
from tests.helpers.datafiles import write_task, xlsx_file
from tests.helpers.mcp import texts

PLACES = "name,city\nSault-au-Récollet,Montréal\nCôte-des-Neiges,Québec\n"
# Every accent at a word's end: no GB18030 reading exists, and the old fallback replaced them.
CAFES = "name\n" + "".join(f"café {i} à Montréal\n" for i in range(13))


def _sql(folder, query, *options):
    return CliRunner().invoke(cli, ["sql", *options, str(folder), query])


def test_a_windows_1252_csv_reads_as_written_and_says_so(tmp_path):
    folder = write_task(tmp_path, files={"csv/places.csv": PLACES.encode("cp1252")})
    result = _sql(folder, "SELECT name, city FROM places ORDER BY name")
    assert result.exit_code == 0, result.output
    assert "Sault-au-Récollet\tMontréal" in result.output.replace("\\t", "\t")
    assert "閏" not in result.output
    assert ("note: csv/places.csv: decoded as Windows-1252: the file is not UTF-8, and its accented letters read "
            "as Western text (e.g. 'Récollet')") in result.output


def test_accents_at_word_ends_are_not_replaced(tmp_path):
    folder = write_task(tmp_path, files={"csv/cafes.csv": CAFES.encode("latin-1")})
    result = _sql(folder, "SELECT count(*) AS n FROM cafes WHERE name LIKE '%é%' AND name LIKE '%à%'")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["n", "13"]  # a pipe gets tab-separated rows only
    assert "U+FFFD" not in result.output


def test_gb18030_files_keep_loading_as_chinese_with_a_note(tmp_path):
    folder = write_task(tmp_path, files={"csv/公司.csv": "名称,金额\n公司甲,12.5\n公司乙,3\n".encode("gbk")})
    with Catalog.open(folder) as catalog:
        assert catalog.query("SELECT 名称 FROM 公司 ORDER BY 金额").rows == [("公司乙",), ("公司甲",)]
        assert [n.reason for n in catalog.notes] == [
            "decoded as GB18030: the file is not UTF-8, and its text reads as Chinese"]


def test_encoding_option_decides_instead_of_the_evidence(tmp_path):
    folder = write_task(tmp_path, files={"csv/places.csv": PLACES.encode("cp1252")})
    forced = _sql(folder, "SELECT name FROM places WHERE name LIKE 'Sault%'", "--encoding", "gb18030")
    assert forced.exit_code == 0 and "Sault-au-R閏ollet" in forced.output  # what the person asked for
    unknown = _sql(folder, "SELECT 1", "--encoding", "klingon")
    assert unknown.exit_code == 1
    assert "Error: unknown encoding 'klingon': use a name Python knows" in unknown.output


def test_bytes_no_encoding_fits_are_replaced_and_said(tmp_path):
    folder = write_task(tmp_path, files={"csv/bad.csv": b"name,v\nok,1\n\xff\xfe\xfd\xfc\x80bad,2\n"})
    result = _sql(folder, "SELECT v FROM bad ORDER BY v")
    assert result.exit_code == 0
    assert "character(s) that do not decode replaced by U+FFFD" in result.output


def test_the_ragged_row_note_reaches_sql(tmp_path):
    folder = write_task(tmp_path, files={"csv/r.csv": "a,b\n1,2\n3\n4,5\n"})
    result = _sql(folder, "SELECT count(*) FROM r")
    assert result.exit_code == 0
    assert result.stdout == "count_star()\n2\n"  # rows only on stdout; the note after them on stderr
    assert result.stderr.splitlines() == [
        "note: csv/r.csv: 1 row(s) with the wrong number of fields not loaded (line 3: 1 fields, expected 2)"]


def test_decimal_commas_in_a_semicolon_csv_are_numbers(tmp_path):
    folder = write_task(tmp_path, files={"csv/m.csv": "x;label;plain\n5,1;a;1.5\n1.234,5;b;2\n-0,25;c;3\n"})
    result = _sql(folder, "SELECT typeof(x) AS t, sum(x) AS s, typeof(plain) AS p FROM m GROUP BY 1, 3")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == "DOUBLE\t1239.35\tDOUBLE"
    assert "column 'x': numbers written with decimal commas read as numbers" in result.stderr


def test_parquet_is_read_with_its_own_types(tmp_path):
    folder = write_task(tmp_path)
    pq.write_table(pa.table({"n": pa.array([1, 2, 3], pa.int32()), "code": ["007", "008", "009"]}),
                   folder / "context" / "nums.parquet")
    listing = CliRunner().invoke(cli, ["tables", str(folder)])
    assert listing.exit_code == 0 and listing.output.startswith("nums  rows        3  cols   2  nums.parquet")
    result = _sql(folder, "SELECT sum(n) AS s, min(typeof(n)) AS t, max(code) AS c FROM nums")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == "6\tINTEGER\t009"  # int32 kept, codes text


def test_excel_sheets_are_tables(tmp_path):
    book = xlsx_file({"Q1": [["region", "amount", "code"], ["North", 10, "007"], ["South", 2.5, "008"]],
                      "Notes": [["k", "v"], ["a", 1]]})
    folder = write_task(tmp_path, files={"sales.xlsx": book})
    with Catalog.open(folder) as catalog:
        assert catalog.names() == ["sales_q1", "sales_notes"]
        assert catalog.query("SELECT region, amount, code FROM sales_q1 ORDER BY amount").rows == [
            ("South", 2.5, "008"), ("North", 10.0, "007")]
        assert catalog.query("SELECT v FROM sales_notes").rows == [(1,)]


def test_every_file_that_gives_no_table_is_listed_with_its_reason(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": "a,b\n1,2\n", "csv/t.xyz": "hello", "bin/blob": b"\x00\x01"})
    listing = CliRunner().invoke(cli, ["tables", str(folder)])
    assert listing.exit_code == 0
    assert "unreadable: csv/t.xyz: not read: .xyz files are not a table format" in listing.output
    assert "unreadable: bin/blob: not read: (no extension) files are not a table format" in listing.output
    result = _sql(folder, "SELECT * FROM t")
    assert "note: (folder): 2 file(s) not read (bin/blob, csv/t.xyz); `datasolver tables` gives each reason" \
        in result.output


def test_load_notes_reach_mcp_the_analyst_and_the_brief(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "r.csv").write_text("a,b\n1,2\n3\n4,5\n", encoding="utf-8")
    note = "1 row(s) with the wrong number of fields not loaded (line 3: 1 fields, expected 2)"
    with build_server(folder) as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                listed = texts(await client.call_tool("list_tables", {}))
                assert listed.splitlines()[:2] == ["- r (2 rows; r.csv): a, b", f"  note: {note}"]
                queried = texts(await client.call_tool("query", {"sql": "SELECT * FROM r"}))
                assert f"note: r.csv: {note}" in queried.splitlines()

        asyncio.run(main())
    with open_package(folder) as package:
        package.catalog.load()
        assert f"  note: {note}" in table_overview(package).splitlines()
        assert f"note: r.csv: {note}" in AskToolbox(package).call("query", {"sql": "SELECT a FROM r"}).text
    with Catalog.open(folder) as catalog:
        assert f"Load notes:\n  - r.csv: {note}" in digest_tables(catalog).render()


def test_a_column_that_is_mostly_numbers_says_why_it_is_text(tmp_path):
    folder = write_task(tmp_path, files={"csv/k.csv": "kids\n1\n2\n3+\n0\n"})
    with Catalog.open(folder) as catalog:
        assert catalog.query("SELECT typeof(kids) FROM k LIMIT 1").rows == [("VARCHAR",)]
        assert [n.reason for n in catalog.load_notes(["k"])] == [
            "column 'kids' left as text: 1 of 4 values are not numbers (e.g. '3+')"]
