"""A CSV header whose name holds a quoted line break loses no row, in the table cache or without it
(DuckDB's direct scan found no row at all, silently; Arrow's `skip_rows` counted the header's second
physical line as a bad row)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize("cached", [True, False])
def test_a_header_with_a_line_break_in_a_name_keeps_every_row(tmp_path: Path, cached: bool) -> None:
    cache = str(tmp_path / "cache") if cached else "off"  # (a bare "on" was a folder of that name in the cwd)
    task = tmp_path / "task_h"
    (task / "context").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_h", "question": "q"}), encoding="utf-8")
    with (task / "context" / "t.csv").open("w", encoding="utf-8", newline="") as out:
        csv.writer(out).writerows([["a", "b\nx"], ["1", "y"], ["3", "4"], ["5", "6"]])
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT a, count(*) AS n FROM t GROUP BY a ORDER BY a",
                                      "--table-cache", cache])
    assert result.exit_code == 0, result.output
    assert result.stdout == "a\tn\n1\t1\n3\t1\n5\t1\n"
    assert "not loaded" not in result.stderr and "wrong number of fields" not in result.stderr
