"""The whole pipeline on the dev tasks, driven by a scripted model that writes each task's oracle SQL
into solver.py through the real tools; `datasolver eval` must give 1.0 everywhere, in 4 requests a
task (read_solver, edit_solver, run_solver, the closing sentence). Tasks whose table lives in a
document depend on the documents room's deterministic path. The scripted model answers at the
client's transport (`tests/helpers/askcli.py`'s `cli_model`).

All 40 dev tasks (`slow`); of dev-en, the 8 tasks whose runs cover every line and branch a run of
all 40 covers (`DEV_EN_ORACLE_SAMPLE`, found by benchmarks/dev_sample.py), which saves ~15 CPU-s."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.examples import solver_handler
from datasolver.llm.fake import SCRIPTED_BASE_URL
from tests.helpers.askcli import cli_model
from tests.helpers.datafiles import gold_is_only_nulls
from tests.helpers.devsets import DEV_EN_ORACLE_SAMPLE, gold_of
from tests.helpers.paths import SHARED
from tests.helpers.pipeline import oracle_answers


REQUESTS_PER_TASK = 4  # a perfect model needs no more: read, edit, run, stop


@pytest.mark.parametrize("task_set,sample", [pytest.param("dev", None, marks=pytest.mark.slow, id="dev"),
                                             pytest.param("dev-en", DEV_EN_ORACLE_SAMPLE, id="dev-en")])
def test_run_with_the_oracle_script_scores_one_on_every_dev_task(task_set, sample, tmp_path):
    dev_tasks = SHARED / "tasks" / task_set
    if not (dev_tasks / "oracle.jsonl").is_file():
        pytest.skip(f"{dev_tasks} is absent (only present beside the project's own checkout)")
    answers = oracle_answers(dev_tasks)
    assert len(answers) == 40 and set(sample or ()) <= set(answers)
    task_ids = sorted(sample or answers)
    out, logs = tmp_path / "out", tmp_path / "logs"
    with cli_model(handler=solver_handler(answers)) as model:
        result = CliRunner().invoke(cli, [
            "run", str(dev_tasks / "input"), str(out), "--api-url", SCRIPTED_BASE_URL, "--model", "oracle",
            "--workers", "8", "--logs", str(logs), "--no-doc-llm", "--no-direct-answer", *(["--tasks", ",".join(task_ids)] if sample else []),
        ])
        assert result.exit_code == 0, result.output
        assert model.errors == []
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    not_solved = {t["task_id"]: t["reason"] for t in summary["tasks"] if t["status"] != "solved"}
    assert not_solved == {}
    # One more where the gold is only NULLs (task_en_yelp_17): empty_result sends the answer back once.
    expected = {task_id: REQUESTS_PER_TASK + gold_is_only_nulls(dev_tasks / "output" / task_id / "gold.csv")
                for task_id in task_ids}
    assert {t["task_id"]: t["requests"] for t in summary["tasks"]} == expected
    gold = gold_of(dev_tasks, tuple(task_ids), tmp_path / "gold") if sample else dev_tasks / "output"
    scored = CliRunner().invoke(cli, [
        "eval", str(out), str(gold), "--json", str(tmp_path / "eval.json"), "--no-explain"])
    assert scored.exit_code == 0, scored.output
    n = len(task_ids)
    assert f"Mean 1.0000 over {n} tasks ({n} at 1.0)" in scored.output
    per_task = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    assert per_task["mean"] == 1.0
