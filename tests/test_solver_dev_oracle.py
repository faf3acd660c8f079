"""Every dev task: prepare → read_solver → edit_solver (oracle SQL) → run_solver OK → score 1.0.

Tasks whose tables live in documents first run the documents stage (deterministic path) and
re-render the scaffold; they skip while `datasolver.documents` is not there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.documents import prepare_documents
from datasolver.solver import SolverToolbox, prepare_task, write_scaffold
from datasolver.solver.testing import call_json, result_line_address

ORACLE = Path(__file__).resolve().parents[1].parent / "shared" / "tasks" / "dev" / "oracle.jsonl"


def _oracle_entries() -> list[dict]:
    if not ORACLE.is_file():
        return []
    return [json.loads(line) for line in ORACLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _params() -> list:
    params = [pytest.param(entry, id=entry["task_id"]) for entry in _oracle_entries()]
    return params or [pytest.param(None, id="no-shared-tasks")]


@pytest.mark.parametrize("entry", _params())
def test_oracle_sql_through_the_tools_scores_one(entry: dict | None, dev_tasks: Path, tmp_path: Path) -> None:
    from datasolver.eval import score_files

    assert entry is not None
    root = prepare_task(dev_tasks / "input" / entry["task_id"], tmp_path / "scratch")
    if any(t.get("format") == "doc" for t in entry["tables"].values()):
        prepare_documents(root)  # document tables into derived/
        write_scaffold(root)  # so the query-area comment lists them
    with SolverToolbox(root) as toolbox:
        number, digest = result_line_address(toolbox)  # via read_solver
        # Newlines around the SQL: an oracle query may end with a double quote.
        code = 'result = run_sql("""\n' + entry["sql"] + '\n""")'
        edit = call_json(toolbox, "edit_solver",
                         json.dumps({"start_line": number, "start_hash": digest, "new_content": code}))
        assert edit.ok, edit.text
        run = call_json(toolbox, "run_solver", "{}")
    assert run.text.splitlines()[0] == "OK", run.text
    # The right answer raises no answer check (no false positive; ties_cut would only inform).
    assert run.value.names == [] and "\nCHECK " not in run.text, run.value.lines()
    score = score_files(root / "workdir" / "prediction.csv", dev_tasks / "output" / entry["task_id"] / "gold.csv")
    assert score.score == 1.0, score.reason
