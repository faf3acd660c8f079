"""`datasolver eval` and `datasolver eval-compare` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.cli.eval_cmd import COMMANDS

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    for task, difficulty in (("t1", "easy"), ("t2", "hard"), ("t3", "hard")):
        _put(tmp_path / "gold" / task / "gold.csv", "city,total\nFes,16405.6\nRabat,13762.58\n")
        _put(tmp_path / "input" / task / "task.json", json.dumps({"task_id": task, "difficulty": difficulty}))
    _put(tmp_path / "pred" / "t1" / "prediction.csv", "total,city\n16405.60,Fes\n13762.58,Rabat\n")
    _put(tmp_path / "pred" / "t2" / "prediction.csv", "city,total\nFes,16405.6\nRabat,13762.57\n")
    return tmp_path


def _run(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_commands_registered() -> None:
    assert {c.name for c in COMMANDS} == {"eval", "eval-compare"}
    assert all(cli.get_command(click.Context(cli), c.name) is c for c in COMMANDS)
    assert all(c.help for c in COMMANDS)


def test_eval_prints_table_means_and_reasons(layout: Path) -> None:
    result = _run("eval", layout / "pred", layout / "gold", "--input", layout / "input")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Mean 0.4833 over 3 tasks (1 at 1.0)" in out  # (1 + 0.45 + 0) / 3
    assert "easy 1.0000 (1) · hard 0.2250 (2)" in out
    assert "Missing predictions (1): t3" in out
    assert "1/2 gold columns unmatched; 1 extra column" in out
    assert "✗ 'total': closest pred 'total'" in out
    assert "gold '13762.58' vs pred '13762.57'" in out


def test_eval_writes_json_and_compares_with_baseline(layout: Path) -> None:
    first = layout / "first.json"
    assert _run("eval", layout / "pred", layout / "gold", "--json", first).exit_code == 0
    assert json.loads(first.read_text(encoding="utf-8"))["tasks"]["t3"]["reason"] == "missing prediction"
    # Fix t2, break t1.
    _put(layout / "pred" / "t2" / "prediction.csv", "city,total\nFes,16405.6\nRabat,13762.58\n")
    _put(layout / "pred" / "t1" / "prediction.csv", "city\nFes\nRabat\n")
    result = _run("eval", layout / "pred", layout / "gold", "--baseline", first, "--no-explain")
    assert result.exit_code == 0, result.output
    assert "Newly fixed (1): t2 0.45→1.00" in result.output
    assert "Newly broken (1): t1 1.00→0.50" in result.output
    assert "Still failing (1): t3 0.00→0.00" in result.output
    assert "Why tasks lost points" not in result.output


def test_eval_self_check_with_pred_name(layout: Path) -> None:
    result = _run("eval", layout / "gold", layout / "gold", "--pred-name", "gold.csv")
    assert result.exit_code == 0 and "Mean 1.0000 over 3 tasks (3 at 1.0)" in result.output


def test_eval_penalty_option(layout: Path) -> None:
    result = _run("eval", layout / "pred", layout / "gold", "--penalty", "0", "--json", layout / "r.json")
    assert result.exit_code == 0
    assert json.loads((layout / "r.json").read_text(encoding="utf-8"))["tasks"]["t2"]["score"] == 0.5


def test_eval_usage_errors(layout: Path) -> None:
    result = _run("eval", layout / "pred", layout / "pred")
    assert result.exit_code == 1
    assert result.output.startswith("Error: no <task>/gold.csv under ")
    assert _run("eval", layout / "pred", layout / "absent").exit_code == 2
    assert _run("eval", layout / "pred", layout / "gold", "--penalty", "-1").exit_code == 2


def test_eval_bad_baseline(layout: Path) -> None:
    _put(layout / "bad.json", "[]")
    result = _run("eval", layout / "pred", layout / "gold", "--baseline", layout / "bad.json")
    assert result.exit_code == 1
    assert result.output == f"Error: {layout / 'bad.json'}: no 'tasks' object; write it with `datasolver eval --json FILE`\n"


def test_eval_compare_seeds_and_bootstrap(layout: Path) -> None:
    runs = []
    for seed, t2 in enumerate(("13762.57", "13762.58")):
        _put(layout / "pred" / "t2" / "prediction.csv", f"city,total\nFes,16405.6\nRabat,{t2}\n")
        runs.append(layout / f"new{seed}.json")
        assert _run("eval", layout / "pred", layout / "gold", "--json", runs[-1]).exit_code == 0
    (layout / "pred" / "t1" / "prediction.csv").unlink()
    assert _run("eval", layout / "pred", layout / "gold", "--json", layout / "old.json").exit_code == 0

    result = _run("eval-compare", *runs, "-b", layout / "old.json", "--resamples", "500")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Runs: 2 run(s), mean 0.5750 ± 0.1296 (per run: 0.4833, 0.6667)" in out
    assert "consistency 67%" in out and "flaky (1): t2 (1/2)" in out
    assert "Baseline: 1 run(s), mean 0.3333" in out
    # Per-task means over seeds: t1 1.0 (was 0), t2 0.725 (was 1.0), t3 0 (was 0).
    assert "Newly fixed (1): t1 0.00→1.00" in out
    assert "Newly broken (1): t2 1.00→0.7" in out
    assert "Still failing (1): t3 0.00→0.00" in out
    assert "Difference (runs − baseline): +0.2417, 95% interval" in out


def test_eval_compare_needs_runs() -> None:
    assert _run("eval-compare").exit_code == 2
