"""`datasolver prepare`, `tool` and `solve` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from tests.helpers.solver import make_tiny_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def prepared(tmp_path: Path) -> Path:
    task = make_tiny_task(tmp_path / "input")
    out = CliRunner().invoke(cli, ["prepare", str(task), str(tmp_path / "scratch")])
    assert out.exit_code == 0, out.output
    root = Path(out.output.strip())
    assert root == (tmp_path / "scratch" / "task_tiny").resolve()
    return root


def test_prepare_tool_solve_round_trip(tmp_path: Path) -> None:
    root = prepared(tmp_path)
    runner = CliRunner()
    read = runner.invoke(cli, ["tool", str(root), "read_solver", "{}"])
    assert read.exit_code == 0
    line = next(row for row in read.output.splitlines() if row.endswith("|result = None"))
    number, digest = line.split("|")[0].split(":")
    args = {"start_line": int(number), "start_hash": digest,
            "new_content": 'result = run_sql("SELECT city FROM orders WHERE amount > 5 ORDER BY city")'}
    edit = runner.invoke(cli, ["tool", str(root), "edit_solver", json.dumps(args)])
    assert edit.exit_code == 0 and edit.output.startswith(f"Replaced line {number} with 1 line")
    run = runner.invoke(cli, ["tool", str(root), "run_solver", '{"show_rows": 0}', "--json"])
    payload = json.loads(run.output)
    assert payload["ok"] is True and payload["kind"] == "ok" and payload["text"].startswith("OK\n")

    solved = runner.invoke(cli, ["solve", str(root), "--output", str(tmp_path / "out")])
    assert solved.exit_code == 0, solved.output
    target = tmp_path / "out" / "task_tiny" / "prediction.csv"
    assert solved.output == f"{target}\n"
    assert target.read_text(encoding="utf-8") == "city\nParis\nParis\n"


def test_solve_without_output_prints_the_workdir_prediction(tmp_path: Path) -> None:
    root = prepared(tmp_path)
    solver = root / "workdir" / "solver.py"
    solver.write_text(solver.read_text(encoding="utf-8").replace("result = None", "result = 1"), encoding="utf-8")
    out = CliRunner().invoke(cli, ["solve", str(root)])
    assert out.exit_code == 0 and out.output == f"{root / 'workdir' / 'prediction.csv'}\n"


def test_solve_reports_no_output_as_an_error(tmp_path: Path) -> None:
    root = prepared(tmp_path)
    out = CliRunner().invoke(cli, ["solve", str(root)])
    assert out.exit_code == 1
    assert out.output.startswith("Error: NO OUTPUT\nsolver.py finished but `result` is still None")


def test_tool_errors(tmp_path: Path) -> None:
    root = prepared(tmp_path)
    runner = CliRunner()
    bad_json = runner.invoke(cli, ["tool", str(root), "read_solver", "{nope"])
    assert bad_json.exit_code == 1 and bad_json.output.startswith("Error: JSON_ARGS is not valid JSON:")
    not_object = runner.invoke(cli, ["tool", str(root), "read_solver", "[1]"])
    assert not_object.output == "Error: JSON_ARGS must be a JSON object, e.g. '{}'\n"
    unknown = runner.invoke(cli, ["tool", str(root), "write_file", "{}"])
    assert unknown.exit_code == 1
    assert unknown.output == ("Error: unknown tool 'write_file'. Valid tools: "
                              "edit_solver, explore_data, read_solver, run_solver.\n")
    unprepared = runner.invoke(cli, ["tool", str(tmp_path), "read_solver", "{}"])
    assert unprepared.exit_code == 1 and "is not a prepared task scratch folder" in unprepared.output
    retry = runner.invoke(cli, ["tool", str(root), "read_solver", '{"offset": 0}', "--json"])
    assert json.loads(retry.output)["kind"] == "retry"


def test_prepare_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = CliRunner().invoke(cli, ["prepare", str(tmp_path / "empty"), str(tmp_path / "scratch")])
    assert out.exit_code == 1 and out.output == f"Error: {tmp_path / 'empty'}: no task.json\n"


def test_commands_have_help() -> None:
    for name in ("prepare", "tool", "solve"):
        out = CliRunner().invoke(cli, [name, "--help"])
        assert out.exit_code == 0 and len(out.output) > 200
