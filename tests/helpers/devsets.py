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
