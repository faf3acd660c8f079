"""Names a person can tell apart: quote characters a file left around its column names are
stripped (with a note), and files of one stem in different formats are named by their whole file
name (`x.json` → `x`, `x.parquet` → `x_parquet`), values as DuckDB reads each file."""

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
import pandas as pd

from tests.helpers.datafiles import write_task, xlsx_file

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _sql(task, query):
    result = CliRunner().invoke(cli, ["sql", str(task), query, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_quote_pairs_around_column_names_are_stripped_with_a_note(tmp_path):
    text = "'country',\"\"\"popul\"\"\",‘area’,it's,'\n'Chile',19,756,x,1\n'Peru',33,1285,y,2\n"
    task = write_task(tmp_path, files={"p.csv": text})
    path = task / "context/p.csv"
    ours = _sql(task, "SELECT * FROM p ORDER BY 2")
    assert [c["name"] for c in ours["columns"]] == ["country", "popul", "area", "it's", "'"]
    reference = duckdb.sql(f"SELECT * FROM read_csv('{path}', header=true, quote='\"') ORDER BY 2").fetchall()
    assert ours["rows"] == [list(row) for row in reference]
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert ("note: p.csv: quote characters around 3 column name(s) removed: "
            "'country' → country, \"popul\" → popul, ‘area’ → area") in listing


def test_quote_pairs_around_a_sheet_s_column_names_are_stripped_with_a_note(tmp_path):
    task = write_task(tmp_path, files={"s.xlsx": xlsx_file({"Sheet1": [["'country'", "pop"], ["Chile", 19], ["Peru", 33]]})})
    ours = _sql(task, "SELECT * FROM s ORDER BY pop")
    assert [c["name"] for c in ours["columns"]] == ["country", "pop"]
    theirs = pd.read_excel(task / "context/s.xlsx", engine="calamine").sort_values("pop")
    assert ours["rows"] == [[c, int(p)] for c, p in theirs.itertuples(index=False)]
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "note: s.xlsx: quote characters around 1 column name(s) removed: 'country' → country" in listing


def test_stripped_names_stay_distinct(tmp_path):
    task = write_task(tmp_path, files={"d.csv": "a,'a',b\n1,2,3\n"})
    assert [c["name"] for c in _sql(task, "SELECT * FROM d")["columns"]] == ["a", "a_1", "b"]


def test_files_of_one_stem_are_named_by_their_file_names(tmp_path):
    records = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    task = write_task(tmp_path, files={
        "x.json": json.dumps(records),
        "x.parquet": lambda p: pq.write_table(pa.Table.from_pylist(records[:1]), p),
        "x.csv.gz": lambda p: __import__("gzip").open(p, "wt").write("id,v\n3,c\n"),
    })
    listing = CliRunner().invoke(cli, ["tables", str(task), "--json"])
    names = {t["name"]: t["source_file"] for t in json.loads(listing.stdout)["tables"]}
    assert names == {"x": "x.csv.gz", "x_json": "x.json", "x_parquet": "x.parquet"}
    context = task / "context"
    for table, read in (("x_json", f"read_json('{context / 'x.json'}')"),
                        ("x_parquet", f"read_parquet('{context / 'x.parquet'}')"),
                        ("x", f"read_csv('{context / 'x.csv.gz'}')")):
        expected = [list(r) for r in duckdb.sql(f"SELECT id::BIGINT, v FROM {read} ORDER BY id").fetchall()]
        assert _sql(task, f"SELECT id, v FROM {table} ORDER BY id")["rows"] == expected
