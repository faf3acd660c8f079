"""Results that would cost the parent gigabytes (issue 33, item 5): the per-cell cap had no total.

Measured before the fix (this machine, 2 cores shared, `/usr/bin/time`): `SELECT repeat('a', 1 MiB - 64)
AS a, … AS d FROM range(500)` fetched with limit 500 — what explore_data, MCP `query` and `sql --limit
500` do — took the process to 6.3 GB and 49 s; under a 3 GiB address-space limit it failed after 21 s.
After: the rows stop before the one that would pass MAX_RESULT_BYTES (16 MiB), measured in DuckDB before
any value is fetched, and every caller says the result was cut: 213 MB, 1.2 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog, ScratchLayout
from datasolver.data.relation import MAX_CELL_BYTES, MAX_RESULT_BYTES
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import make_tiny_task
from tests.helpers.datafiles import write_task

CELL = MAX_CELL_BYTES - 64  # each cell passes the per-cell cap
FITTING = MAX_RESULT_BYTES // (4 * CELL + 8)  # rows of four such cells (and a number) within the budget: 4


def _wide(rows: int) -> str:
    return (f"SELECT range AS i, repeat('a', {CELL}) AS a, repeat('b', {CELL}) AS b, repeat('c', {CELL}) AS c, "
            f"repeat('d', {CELL}) AS d FROM range({rows})")


def _fits(rows: list[tuple]) -> bool:
    return sum(len(v) for row in rows for v in row if isinstance(v, str)) <= MAX_RESULT_BYTES


def test_the_first_rows_stop_at_the_byte_budget_and_say_so(tmp_path: Path) -> None:
    task = write_task(tmp_path, files={"csv/t.csv": "x\n1\n"})
    with Catalog.open(task) as catalog:
        result = catalog.query(_wide(20), limit=20)  # 80 MiB asked for
        assert 0 < len(result.rows) < 20 and _fits(result.rows)
        assert len(result.rows) == FITTING  # every row that fits, no more
        assert [row[0] for row in result.rows] == list(range(len(result.rows)))  # the first rows, in order
        assert (result.total_rows, result.truncated, result.byte_budget) == (20, True, MAX_RESULT_BYTES)
        assert result.count_line().startswith(f"rows: {len(result.rows)} of 20 (truncated: the next row would "
                                              "bring the rows shown past 16.0 MB")
        small = catalog.query("SELECT range AS i, repeat('x', 100) AS s FROM range(600)", limit=500)
        assert (len(small.rows), small.byte_budget) == (500, None)  # within the budget: the limit decides


def test_every_caller_says_the_rows_were_cut_by_the_budget(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        explored = box.call("explore_data", {"query": _wide(30), "limit": 30})
    assert explored.ok and explored.text.splitlines()[0].startswith(f"rows: {FITTING} of 30 (truncated: the next row")
    shown = CliRunner().invoke(cli, ["sql", str(root), _wide(30), "--limit", "30", "--format", "json"])
    assert shown.exit_code == 1, shown.output  # a cap that remains is an error naming --csv FILE (issue 45)
    assert "Write the whole result with --csv FILE" in shown.stderr
    record = json.loads(shown.stdout)
    assert (len(record["rows"]), record["row_count"], record["truncated"]) == (FITTING, 30, True)
    assert "the next row would bring the rows shown past 16.0 MB" in shown.stderr


def test_the_huge_cells_door_stays_under_a_gigabyte(tmp_path: Path) -> None:
    """The door as reported: 500 rows of four cells just under the per-cell cap, `sql --limit 500`,
    in its own process under a 3 GiB address-space limit (the code before the fix ran out of it)."""
    task = write_task(tmp_path, files={"csv/t.csv": "x\n1\n"})
    report = tmp_path / "peak.txt"
    child = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
        "from datasolver.cli import cli\n"
        "try:\n"
        "    cli.main(sys.argv[2:], standalone_mode=False)\n"
        "finally:\n"
        "    open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    done = subprocess.run([sys.executable, "-c", child, str(report), "sql", str(task), _wide(500), "--limit", "500"],
                          capture_output=True, text=True, timeout=300, env={**os.environ})
    assert done.returncode == 1, done.stderr[-2000:]  # cut by the budget, not by --limit: an error
    assert "Write the whole result with --csv FILE" in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "i\ta\tb\tc\td" and len(lines) == 1 + FITTING
    assert done.stderr.startswith(f"rows: {FITTING} of 500 (truncated: the next row would bring the rows shown past")
    peak_mb = int(report.read_text()) / 1024
    assert peak_mb < 1024, f"peak RSS {peak_mb:.0f} MB"


@pytest.mark.parametrize("sql", ["SHOW ALL TABLES", "SELECT ['x', 'y'] AS l, {'k': repeat('z', 10)} AS s"])
def test_list_and_struct_columns_are_measured_as_text(tmp_path: Path, sql: str) -> None:
    """VARCHAR[] was measured with strlen: `SHOW ALL TABLES` failed with `strlen(VARCHAR[])`."""
    task = write_task(tmp_path, files={"csv/t.csv": "x\n1\n"})
    with Catalog.open(task) as catalog:
        assert catalog.query(sql).columns  # the size check binds (its error came before any row)
