"""The competition's dev task sets in ../shared/tasks (dev, dev-en): their oracle and what
`datasolver tables` lists for each task."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.helpers.paths import SHARED


def task_set(name: str) -> Path:
    """../shared/tasks/<name> (input/, output/, oracle.jsonl); it may be absent."""
    return SHARED / "tasks" / name


def oracle(root: Path) -> list[dict]:
    """The set's oracle.jsonl: per task its SQL, question and the tables it needs."""
    lines = (root / "oracle.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def tables_listings(root: Path) -> dict[str, tuple[int, str]]:
    """task id → (exit code, output) of `datasolver tables` on every raw task folder of the set."""
    from click.testing import CliRunner

    from datasolver.cli import cli

    runner = CliRunner()
    listings = {}
    for task in sorted(p for p in (root / "input").iterdir() if p.is_dir()):
        result = runner.invoke(cli, ["tables", str(task)])
        listings[task.name] = (result.exit_code, result.output)
    return listings


def gold_spelled_as_sql(gold: Path, folder: Path) -> Path:
    """A copy of `gold` (in `folder`) whose cells `True` / `False` read `true` / `false`: the golds
    were written by pandas, `datasolver sql --csv` writes a boolean as SQL does. Nothing else changes."""
    with gold.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    spelled = [rows[0]] + [[{"True": "true", "False": "false"}.get(c, c) for c in row] for row in rows[1:]]
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / gold.name
    with copy.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(spelled)
    return copy


# The dev tasks whose pipeline runs cover every line and branch (in-process) that a run over the
# whole set covers: benchmarks/dev_sample.py (each task's run alone under coverage, then a greedy
# cover of their arcs; rerun it when the sets or the pipeline change). The whole sets add no path.
DEV_EN_ORACLE_SAMPLE = ("task_en_academic_15", "task_en_yelp_17", "task_en_atis_11", "task_en_advising_1",
                        "task_en_academic_0", "task_en_academic_7", "task_en_advising_12", "task_en_atis_27")
"""dev-en with the oracle script (tests/test_pipeline_dev_oracle.py): 8 tasks cover 6,158 arcs."""
DEV_TEXT_SAMPLE = ("task_retqa_v3345", "task_falcon_233", "task_retqa_v2554", "task_retqa_v364", "task_falcon_138",
                   "task_falcon_261", "task_retqa_v1800", "task_retqa_v198", "task_falcon_372", "task_falcon_496",
                   "task_falcon_414")
"""dev with calls written as text, prose first, a small window (test_pipeline_dev_text_server.py):
11 tasks cover 7,063 arcs."""


def gold_of(root: Path, task_ids: tuple[str, ...], into: Path) -> Path:
    """A gold folder holding only these tasks' gold.csv (to score a sample of a set)."""
    for task_id in task_ids:
        (into / task_id).mkdir(parents=True)
        (into / task_id / "gold.csv").write_bytes((root / "output" / task_id / "gold.csv").read_bytes())
    return into
