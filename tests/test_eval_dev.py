"""The gold of ../shared/tasks/dev scored against itself: 1.0 for every task."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.eval import evaluate_dir


def test_dev_gold_scores_one_against_itself(dev_tasks: Path) -> None:
    report = evaluate_dir(dev_tasks / "output", dev_tasks, dev_tasks / "input", pred_name="gold.csv")
    assert len(report.tasks) == len(list((dev_tasks / "output").iterdir()))
    assert [t.task_id for t in report.tasks if t.score != 1.0] == []
    assert report.mean == 1.0
    assert "unknown" not in report.by_difficulty and not report.warnings


def test_dev_self_check_cli(dev_tasks: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", str(dev_tasks / "output"), str(dev_tasks / "output"), "--pred-name", "gold.csv",
              "--input", str(dev_tasks / "input")]
    )
    assert result.exit_code == 0, result.output
    n = len(list((dev_tasks / "output").iterdir()))
    assert f"Mean 1.0000 over {n} tasks ({n} at 1.0)" in result.output
