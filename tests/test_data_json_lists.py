"""JSON arrays become DuckDB lists (objects inside them structs), read as DuckDB's own JSON reader
and Parquet read the same records; a list whose elements do not share a type stays JSON text,
with a note."""

import json

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

RECORDS = [
    {"name": "a", "tags": ["male", "x"], "scores": [1, 2.5], "people": [{"who": "ann", "age": 3}, {"who": "bo"}]},
    {"name": "b", "tags": [], "scores": [7], "people": [{"who": "cy", "age": 40}]},
    {"name": "c", "tags": None, "scores": None, "people": None},
]


def _sql(task, query):
    result = CliRunner().invoke(cli, ["sql", str(task), query, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _duck(query):
    return [list(row) for row in duckdb.sql(query).fetchall()]


QUERY = ("SELECT name, len(tags), tags[1], list_sum(scores), people[1].who, people[1].age, people[2].age "
         "FROM {} ORDER BY name")


def test_json_lists_are_lists_as_duckdb_and_parquet_read_them(tmp_path):
    task = write_task(tmp_path, files={"people.json": json.dumps(RECORDS),
                                       "same.parquet": lambda p: pq.write_table(pa.Table.from_pylist(RECORDS), p)})
    json_path, parquet_path = task / "context/people.json", task / "context/same.parquet"
    ours = _sql(task, QUERY.format("people"))
    assert ours["rows"][0][:3] == ["a", 2, "male"]
    assert ours["rows"] == _duck(QUERY.format(f"read_json('{json_path}')"))
    assert ours["rows"] == _duck(QUERY.format(f"read_parquet('{parquet_path}')"))
    assert _sql(task, "SELECT typeof(tags), typeof(people) FROM people LIMIT 1")["rows"] == [
        ["VARCHAR[]", "STRUCT(who VARCHAR, age BIGINT)[]"]]


def test_kdd_records_shape_and_json_lines_type_lists_too(tmp_path):
    task = write_task(tmp_path, files={
        "kdd.json": json.dumps({"table": "kdd", "records": RECORDS}),
        "lines.jsonl": "\n".join(json.dumps(r) for r in RECORDS) + "\n",
    })
    for table in ("kdd", "lines"):
        assert _sql(task, QUERY.format(table))["rows"] == _duck(QUERY.format(f"read_json('{task / 'context/lines.jsonl'}')"))


def test_lists_of_mixed_elements_stay_json_text_with_a_note(tmp_path):
    rows = [{"id": 1, "v": [1, "a"], "w": [[1], 2]}, {"id": 2, "v": [2], "w": "x"}]
    task = write_task(tmp_path, files={"mixed.json": json.dumps(rows)})
    assert _sql(task, "SELECT v, w FROM mixed ORDER BY id")["rows"] == [
        [json.dumps(rows[0]["v"]), json.dumps(rows[0]["w"])], ["[2]", "x"]]
    listing = CliRunner().invoke(cli, ["tables", str(task)])
    assert listing.exit_code == 0, listing.output
    for column in ("v", "w"):
        assert f"column '{column}' kept as JSON text: its values (lists, their elements) do not share one type" in listing.output


def test_only_empty_lists_are_lists_of_text(tmp_path):
    task = write_task(tmp_path, files={"e.json": json.dumps([{"id": 1, "t": []}, {"id": 2, "t": [None]}])})
    assert _sql(task, "SELECT typeof(t), len(t) FROM e ORDER BY id")["rows"] == [["VARCHAR[]", 0], ["VARCHAR[]", 1]]


def test_lists_nested_past_the_limit_stay_json_text_with_a_note(tmp_path):
    deep = json.loads("[" * 40 + "1" + "]" * 40)
    task = write_task(tmp_path, files={"deep.json": json.dumps([{"id": 1, "d": deep, "ok": [[1], [2, 3]]}])})
    assert _sql(task, "SELECT d, typeof(ok), ok[2][2] FROM deep")["rows"] == [[json.dumps(deep), "BIGINT[][]", 3]]
    listing = CliRunner().invoke(cli, ["tables", str(task)]).output
    assert "column 'd' kept as JSON text: lists and objects nested more than 32 deep" in listing
