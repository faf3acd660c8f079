"""Dev tasks whose needed table exists only in context/doc become solvable by their oracle SQL
after the deterministic path (`prepare --no-llm`). Skips without ../shared."""

from __future__ import annotations

import json
from pathlib import Path


from datasolver.documents import prepare_documents


def doc_tasks(dev: Path) -> list[dict]:
    rows = [json.loads(line) for line in (dev / "oracle.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if any(t.get("format") == "doc" for t in r["tables"].values())]


def test_doc_tasks_reproduce_gold_after_deterministic_prepare(dev_tasks: Path, tmp_path: Path) -> None:
    from datasolver.data import Catalog  # our own package: an ImportError fails the test
    from datasolver.eval.score import score_files
    tasks = doc_tasks(dev_tasks)
    assert tasks, "oracle.jsonl lists no task whose table lives in a document"
    failures = []
    for oracle in tasks:
        task = tmp_path / oracle["task_id"]
        task.mkdir()
        (task / "context").symlink_to(dev_tasks / "input" / oracle["task_id"] / "context")
        report = prepare_documents(task)  # no model: the deterministic path only
        assert not report.skipped, report.skipped
        with Catalog.open(task) as catalog:
            for name, table in oracle["tables"].items():
                if table["format"] == "doc":
                    assert catalog.table(name).kind == "derived", name
            frame = catalog.sql(oracle["sql"]).df()
        pred = task / "prediction.csv"
        frame.to_csv(pred, index=False)
        score = score_files(pred, dev_tasks / "output" / oracle["task_id"] / "gold.csv")
        if score.score != 1.0:
            failures.append(f"{oracle['task_id']}: {score.score} ({score.reason})")
    assert not failures, failures
