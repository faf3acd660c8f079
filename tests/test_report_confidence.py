"""The report shows each task's confidence (the run summary's `TaskRecord.confidence`) as a sortable column,
and in the summary the answers per label; with --gold how many of each were right (the calibration table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.solver.publish import prediction_path

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

# task id: (its label, whether its prediction is right; None: no prediction)
TASKS = {"t1": ("high", True), "t2": ("high", True), "t3": ("high", False), "t4": ("medium", True),
         "t5": ("low", False), "t6": ("low", True), "t7": (None, None)}


def _run(root: Path) -> tuple[Path, Path, Path]:
    logs, output, gold = root / "logs", root / "output", root / "gold"
    records = []
    for task_id, (label, right) in TASKS.items():
        (gold / task_id).mkdir(parents=True)
        (gold / task_id / "gold.csv").write_text("amount\n19\n", encoding="utf-8")
        if right is not None:
            path = prediction_path(output, task_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("amount\n" + ("19" if right else "18") + "\n", encoding="utf-8")
        records.append({"task_id": task_id, "status": "failed" if right is None else "solved", "attempts": 1,
                        "requests": 1, "usage": {"requests": 1, "total_tokens": 10}, "seconds": 1.0,
                        "confidence": label})
    logs.mkdir()
    (logs / "run_summary.json").write_text(json.dumps({"finished": True, "model": "m", "tasks": records}),
                                           encoding="utf-8")
    return logs, output, gold


def _page(tmp_path: Path, *gold_args: str) -> str:
    logs, output, gold = _run(tmp_path)
    args = ["report", str(logs), "--output", str(tmp_path / "r.html")]
    if gold_args:
        args += ["--gold", str(gold), "--predictions", str(output)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return (tmp_path / "r.html").read_text(encoding="utf-8")


def _cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]


def _table(page: str, table_id: str) -> list[list[str]]:
    table = re.search(rf'<table id="{table_id}">(.*?)</table>', page, re.DOTALL)
    assert table is not None, f"no table {table_id}"
    return [_cells(row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.DOTALL)]


def test_the_tasks_table_has_a_sortable_confidence_column(tmp_path: Path) -> None:
    page = _page(tmp_path)
    head, *rows = _table(page, "tasks")
    column = head.index("confidence")
    assert {row[0]: row[column] for row in rows} == {t: label or "—" for t, (label, _) in TASKS.items()}
    # sorted as a number, low < medium < high, an answer without a label below them all
    assert re.search(r'<th data-type="num" scope="col">confidence</th>', page)
    ranks = dict(re.findall(r'<td class="conf-(\w+)" data-v="(-?\d)">', page))
    assert ranks == {"high": "2", "medium": "1", "low": "0", "none": "-1"}


def test_the_summary_counts_each_label(tmp_path: Path) -> None:
    assert _table(_page(tmp_path), "confidence") == [["confidence", "answers"], ["high", "3"], ["medium", "1"],
                                                     ["low", "2"]]


def test_with_gold_the_summary_says_how_many_of_each_label_were_right(tmp_path: Path) -> None:
    assert _table(_page(tmp_path, "--gold"), "confidence") == [
        ["confidence", "answers", "scored", "right", "share right"],
        ["high", "3", "3", "2", "67%"], ["medium", "1", "1", "1", "100%"], ["low", "2", "2", "1", "50%"]]
