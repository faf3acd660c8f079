"""evaluate_dir over a tiny gold/prediction layout, and the results JSON round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.eval import EvalReport, evaluate_dir, find_gold, load_report
from datasolver.eval.errors import InvalidRunFile, NoGoldTasks

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _put(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """gold under output/, predictions for t1 (right), t2 (half right), t4 (no gold); t3 missing."""
    for task, difficulty in (("t1", "easy"), ("t2", "Hard"), ("t3", None)):
        _put(tmp_path / "output" / task / "gold.csv", "a,b\n1,x\n2,y\n")
        meta = {"task_id": task, "question": "?"} | ({"difficulty": difficulty} if difficulty else {})
        _put(tmp_path / "input" / task / "task.json", json.dumps(meta))
    _put(tmp_path / "pred" / "t1" / "prediction.csv", "b,a\ny,2\nx,1\n")
    _put(tmp_path / "pred" / "t2" / "prediction.csv", "a\n1\n2\n")
    _put(tmp_path / "pred" / "t4" / "prediction.csv", "a\n1\n")
    return tmp_path


def test_evaluate_dir(layout: Path) -> None:
    report = evaluate_dir(layout / "pred", layout, layout / "input")
    assert report.scores() == {"t1": 1.0, "t2": 0.5, "t3": 0.0}
    assert report.mean == pytest.approx(0.5)
    assert [(t.task_id, t.difficulty) for t in report.tasks] == [("t1", "easy"), ("t2", "hard"), ("t3", "unknown")]
    assert report.by_difficulty == {"easy": (1.0, 1), "hard": (0.5, 1), "unknown": (0.0, 1)}
    assert report.missing == ["t3"]
    assert report.unscored == ["t4"]


def test_gold_found_directly_or_under_output(layout: Path) -> None:
    assert list(find_gold(layout)) == ["t1", "t2", "t3"]
    assert list(find_gold(layout / "output")) == ["t1", "t2", "t3"]


def test_no_gold_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NoGoldTasks, match="no <task>/gold.csv"):
        evaluate_dir(tmp_path, tmp_path)
    with pytest.raises(NoGoldTasks, match="not found"):
        evaluate_dir(tmp_path, tmp_path / "absent")


def test_difficulty_unknown_without_input(layout: Path) -> None:
    report = evaluate_dir(layout / "pred", layout)
    assert report.by_difficulty == {"unknown": (0.5, 3)}


def test_unreadable_task_json_is_reported(layout: Path) -> None:
    (layout / "input" / "t1" / "task.json").write_text("{not json", encoding="utf-8")
    report = evaluate_dir(layout / "pred", layout, layout / "input")
    assert report.tasks[0].difficulty == "unknown"
    assert len(report.warnings) == 1 and "t1" in report.warnings[0]


def test_pred_name_option(layout: Path) -> None:
    report = evaluate_dir(layout / "output", layout, pred_name="gold.csv")
    assert report.mean == 1.0 and report.pred_name == "gold.csv"


def test_penalty_passed_through(layout: Path) -> None:
    _put(layout / "pred" / "t1" / "prediction.csv", "a,b,c\n1,x,0\n2,y,0\n")
    report = evaluate_dir(layout / "pred", layout, penalty=0.3)
    assert report.scores()["t1"] == pytest.approx(1 - 0.3 / 3)


def test_json_round_trip(layout: Path, tmp_path: Path) -> None:
    report = evaluate_dir(layout / "pred", layout, layout / "input")
    report.save(tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data["mean"] == pytest.approx(0.5) and data["missing"] == ["t3"]
    assert data["tasks"]["t2"]["extra"] == 0 and data["tasks"]["t2"]["difficulty"] == "hard"
    loaded = load_report(tmp_path / "run.json")
    assert loaded.scores() == report.scores()
    assert loaded.by_difficulty == report.by_difficulty
    assert loaded.tasks[1].result.columns == report.tasks[1].result.columns
    assert isinstance(loaded, EvalReport)


@pytest.mark.parametrize(
    ("content", "message"),
    [("{", "not a results JSON"), ("[]", "no 'tasks'"), ('{"version": 9, "tasks": {}}', "version 9")],
)
def test_load_report_rejects_bad_files(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InvalidRunFile, match=message):
        load_report(path)
