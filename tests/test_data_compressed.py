"""Compressed CSV/TSV/JSON files (`x.csv.gz`, `x.tsv.bz2`, `x.json.zst`) become tables, within a
bound on their decompressed size; a query naming a table whose file was not read says which file
and why. Values are compared with what DuckDB and pandas read from the same compressed file."""

import bz2
import gzip
import json
import lzma

import duckdb
import pandas as pd
import pyarrow as pa
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

ROWS = [("Afghanistan", "Asia", 1952, 28.801, 8425333), ("Albania", "Europe", 1957, 59.28, 1476505),
        ("Algeria", "Africa", 1962, 48.303, 11000948), ("Angola", "Africa", 1967, 35.985, 5247469)]
CSV = "country,continent,year,lifeExp,pop\n" + "".join(",".join(map(str, r)) + "\n" for r in ROWS)


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def _sql(task, query, env=None):
    return CliRunner().invoke(cli, ["sql", str(task), query, "--format", "json"], env=env or {})


def _rows(result):
    assert result.exit_code == 0, result.output
    return [tuple(r) for r in json.loads(result.stdout)["rows"]]


def test_gzipped_csv_is_a_table_named_from_its_stem_with_the_values_duckdb_and_pandas_read(tmp_path):
    task = write_task(tmp_path, files={"csv/gapminder.csv.gz": gzip.compress(CSV.encode())})
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0, listing.output
    assert listing.output.split()[:5] == ["gapminder", "rows", "4", "cols", "5"]
    assert "unreadable" not in listing.output

    ours = _rows(_sql(task, "SELECT * FROM gapminder ORDER BY year"))
    path = str(task / "context/csv/gapminder.csv.gz")
    assert ours == duckdb.sql(f"SELECT * FROM read_csv('{path}') ORDER BY year").fetchall()
    assert ours == [tuple(r) for r in pd.read_csv(path).sort_values("year").itertuples(index=False)]
    assert ours == ROWS


@pytest.mark.parametrize("name, pack", [
    ("csv/t.tsv.gz", lambda text: gzip.compress(text.replace(",", "\t").encode())),
    ("t.csv.bz2", lambda text: bz2.compress(text.encode())),
    ("t.csv.xz", lambda text: lzma.compress(text.encode())),
    ("t.csv.zst", lambda text: _zstd(text.encode())),
])
def test_each_compression_pandas_reads_gives_the_same_table(tmp_path, name, pack):
    task = write_task(tmp_path, files={name: pack(CSV)})
    ours = _rows(_sql(task, "SELECT * FROM t ORDER BY year"))
    path = task / "context" / name
    if name.endswith(".zst"):  # pandas needs the zstandard package for it; DuckDB reads it itself
        assert ours == duckdb.sql(f"SELECT * FROM read_csv('{path}') ORDER BY year").fetchall()
    else:
        frame = pd.read_csv(path, sep="\t" if ".tsv" in name else ",")
        assert ours == [tuple(r) for r in frame.sort_values("year").itertuples(index=False)]


@pytest.mark.parametrize("name, pack", [
    ("json/people.json.gz", lambda text: gzip.compress(text.encode())),
    ("people.jsonl.zst", lambda text: _zstd(text.encode())),
])
def test_compressed_json_and_json_lines_are_tables(tmp_path, name, pack):
    records = [{"name": n, "year": y, "pop": p} for n, _, y, _, p in ROWS]
    text = json.dumps(records) if ".jsonl" not in name else "".join(json.dumps(r) + "\n" for r in records)
    task = write_task(tmp_path, files={name: pack(text)})
    ours = _rows(_sql(task, "SELECT name, year, pop FROM people ORDER BY year"))
    assert ours == [(r["name"], r["year"], r["pop"]) for r in records]
    path = task / "context" / name
    if name.endswith(".zst"):
        theirs = duckdb.sql(f"SELECT name, year, pop FROM read_json('{path}') ORDER BY year").fetchall()
    else:
        frame = pd.read_json(path, lines=".jsonl" in name)
        theirs = [tuple(r) for r in frame.sort_values("year").itertuples(index=False)]
    assert ours == theirs


def test_a_gzip_bomb_is_refused_past_the_per_file_limit_and_the_query_says_why(tmp_path):
    bomb = gzip.compress(b"a,b\n" + b"1,2\n" * 600_000)  # 2.4 MB of rows in ~10 KB
    task = write_task(tmp_path, files={"csv/bomb.csv.gz": bomb, "csv/ok.csv": "x\n1\n"})
    env = {"DATASOLVER_MAX_FILE_BYTES": "1M"}
    listing = CliRunner().invoke(cli, ["tables", str(task)], env=env)
    assert listing.exit_code == 0, listing.output
    assert "csv/bomb.csv.gz" in listing.output and "decompresses to more than 1.0 MB" in listing.output
    assert "DATASOLVER_MAX_FILE_BYTES" in listing.output

    result = _sql(task, "SELECT count(*) FROM bomb", env)
    assert result.exit_code == 1
    assert "table 'bomb' could not be loaded" in result.output
    assert "csv/bomb.csv.gz was not read" in result.output and "decompresses to more than" in result.output
    assert _rows(_sql(task, "SELECT count(*) FROM bomb", {"DATASOLVER_MAX_FILE_BYTES": "8M"})) == [(600_000,)]


def test_a_damaged_gzip_is_a_note_and_the_unknown_table_error_names_it(tmp_path):
    good = gzip.compress(CSV.encode())
    task = write_task(tmp_path, files={"csv/broken.csv.gz": good[:40], "sales.xyz": "a,b\n1,2\n"})
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0, listing.output
    assert any(line.startswith("unreadable: csv/broken.csv.gz: not a readable gzip file")
               for line in listing.output.splitlines()), listing.output

    broken = _sql(task, "SELECT * FROM broken")
    assert broken.exit_code == 1
    assert "csv/broken.csv.gz was not read: not a readable gzip file" in broken.output
    other = _sql(task, "SELECT * FROM sales")
    assert other.exit_code == 1
    assert "sales.xyz was not read: .xyz files are not a table format" in other.output
