"""Catalog.sql returns a lazy Relation: nothing runs until an output is asked for, each output runs
the query once, and the rewrites are the relation's own (no DataFrame.attrs)."""

from __future__ import annotations

import pandas as pd
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog, QueryError
from datasolver.data.relation import Relation
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def catalog(tmp_path):
    task = write_task(tmp_path, files={"csv/t.csv": "名称,值\n甲,1\n乙,2\n丙,3\n"})
    with Catalog.open(task) as cat:
        yield cat


def _count_runs(catalog: Catalog, monkeypatch) -> list[str]:
    runs: list[str] = []
    real = catalog._run

    def counting(sql, fetch, *rest):
        runs.append(sql)
        return real(sql, fetch, *rest)

    monkeypatch.setattr(catalog, "_run", counting)
    return runs


def test_nothing_runs_until_an_output_is_asked_for(catalog, monkeypatch) -> None:
    runs = _count_runs(catalog, monkeypatch)
    relation = catalog.sql("SELECT nope FROM t")
    assert isinstance(relation, Relation) and runs == [] and relation.rewrites == []
    with pytest.raises(QueryError):
        relation.fetch(5)
    assert runs == ["SELECT nope FROM t"]


def test_outputs_and_their_rewrites(catalog, tmp_path) -> None:
    relation = catalog.sql("SELECT [名称] FROM t ORDER BY 值")
    result = relation.fetch(2)
    assert (result.rows, result.total_rows) == ([("甲",), ("乙",)], 3)
    assert relation.rewrites and result.rewrites == relation.rewrites
    assert relation.final_sql == 'SELECT "名称" FROM t ORDER BY 值'
    frame = relation.df()
    assert isinstance(frame, pd.DataFrame) and frame.attrs == {} and list(frame["名称"]) == ["甲", "乙", "丙"]
    written = relation.to_csv(tmp_path / "out.csv", preview_rows=2)
    assert (tmp_path / "out.csv").read_text(encoding="utf-8") == "名称\n甲\n乙\n丙\n"
    assert (written.columns, written.rows, written.total_rows, written.truncated) == (["名称"], [("甲",), ("乙",)], 3, True)


def test_sql_with_csv_runs_the_query_once(tmp_path, monkeypatch) -> None:
    task = write_task(tmp_path, files={"csv/t.csv": "a\n1\n2\n3\n"})
    runs: list[str] = []
    real = Catalog._run

    def counting(self, sql, fetch, *rest):
        runs.append(sql)
        return real(self, sql, fetch, *rest)

    monkeypatch.setattr(Catalog, "_run", counting)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT a FROM t ORDER BY a", "--limit", "1", "--csv", str(out)])
    assert result.exit_code == 0, result.output
    assert runs == ["SELECT a FROM t ORDER BY a"]
    assert result.stdout.splitlines() == ["a", "1"]
    assert result.stderr.splitlines() == ["rows: 1 of 3 (truncated)", f"wrote 3 rows to {out}"]
    assert out.read_text(encoding="utf-8") == "a\n1\n2\n3\n"


def _udf_relation(sql: str) -> tuple[Relation, list[int]]:
    """A relation over an in-memory database whose `seen(i)` records every row the query computes."""
    import duckdb

    from datasolver.data.sql_repair import RepairOutcome

    conn = duckdb.connect()
    calls: list[int] = []
    conn.create_function("seen", lambda i: calls.append(i) or True, ["BIGINT"], "BOOLEAN", side_effects=True)
    return Relation(lambda text, fetch: RepairOutcome(fetch(conn.sql(text)), text), sql), calls


@pytest.mark.parametrize("select", ["i", "i, 'row ' || i AS label"])  # without and with a measured text column
def test_a_result_within_the_limit_is_computed_once(select: str) -> None:
    # The count comes with the rows: a table read straight from its file is parsed once, not twice.
    relation, calls = _udf_relation(f"SELECT {select} FROM range(5) t(i) WHERE seen(i)")
    result = relation.fetch(50)
    assert ([r[0] for r in result.rows], result.total_rows, result.truncated) == ([0, 1, 2, 3, 4], 5, False)
    assert sorted(calls) == [0, 1, 2, 3, 4]
    calls.clear()
    exact = relation.fetch(5)  # as many rows as the limit: the extra row fetched tells there is no more
    assert (len(exact.rows), exact.total_rows, exact.truncated) == (5, 5, False)
    assert sorted(calls) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("limit", [0, 2, 4])
def test_a_result_over_the_limit_is_still_counted(limit: int) -> None:
    relation, _ = _udf_relation("SELECT i FROM range(5) t(i) WHERE seen(i)")
    result = relation.fetch(limit)
    assert (result.rows, result.total_rows, result.truncated) == ([(i,) for i in range(limit)], 5, True)
    assert result.count_line() == f"rows: {limit} of 5 (truncated)"
