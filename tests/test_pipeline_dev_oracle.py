"""The whole pipeline on the 40 dev and the 40 dev-en tasks, driven by a scripted model that writes
each task's oracle SQL into solver.py through the real tools; `datasolver eval` must give 1.0
everywhere, in 4 requests a task (read_solver, edit_solver, run_solver, the closing sentence).
Tasks whose table lives in a document depend on the documents room's deterministic path."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.examples import solver_handler
from datasolver.llm.fake import ScriptedServer
from tests.helpers.paths import SHARED
from tests.helpers.pipeline import oracle_answers
from tests.helpers.datafiles import gold_is_only_nulls


REQUESTS_PER_TASK = 4  # a perfect model needs no more: read, edit, run, stop


@pytest.mark.slow
@pytest.mark.parametrize("task_set", ["dev", "dev-en"])
def test_run_with_the_oracle_script_scores_one_on_every_dev_task(task_set, tmp_path):
    dev_tasks = SHARED / "tasks" / task_set
    if not (dev_tasks / "oracle.jsonl").is_file():
        pytest.skip(f"{dev_tasks} is absent (only present beside the project's own checkout)")
    answers = oracle_answers(dev_tasks)
    assert len(answers) == 40
    out, logs = tmp_path / "out", tmp_path / "logs"
    with ScriptedServer(handler=solver_handler(answers)) as server:
        result = CliRunner().invoke(cli, [
            "run", str(dev_tasks / "input"), str(out), "--api-url", server.base_url, "--model", "oracle",
            "--workers", "8", "--logs", str(logs), "--no-doc-llm",
        ])
        assert result.exit_code == 0, result.output
        assert server.errors == []
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    not_solved = {t["task_id"]: t["reason"] for t in summary["tasks"] if t["status"] != "solved"}
    assert not_solved == {}
    # One more where the gold is only NULLs (task_en_yelp_17): empty_result sends the answer back once.
    expected = {task_id: REQUESTS_PER_TASK + gold_is_only_nulls(dev_tasks / "output" / task_id / "gold.csv")
                for task_id in answers}
    assert {t["task_id"]: t["requests"] for t in summary["tasks"]} == expected
    scored = CliRunner().invoke(cli, [
        "eval", str(out), str(dev_tasks / "output"), "--json", str(tmp_path / "eval.json"), "--no-explain"])
    assert scored.exit_code == 0, scored.output
    assert "Mean 1.0000 over 40 tasks (40 at 1.0)" in scored.output
    per_task = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    assert per_task["mean"] == 1.0
