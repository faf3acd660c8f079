"""SQL written by people for PostgreSQL runs on the engine: on every dev-en task's raw folder,
`datasolver sql TASK_DIR --csv OUT -- SQL` with its `pg_sql_canonical` (../shared/tasks/dev-en/
oracle.jsonl: the human-written PostgreSQL that made its gold, table names made canonical)
reproduces gold.csv (official metric 1.0; booleans spelt true/false as SQL writes them, where the
pandas-made gold says True/False), repairs included; so does the DuckDB oracle `sql`.
Tables that exist only as Markdown tables in `doc/*.md` come from the document cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.eval import score_files
from tests.helpers.devsets import gold_spelled_as_sql, oracle, task_set

DEV_EN = task_set("dev-en")


@pytest.mark.slow
@pytest.mark.parametrize("key", ["pg_sql_canonical", "sql"])
def test_each_dev_en_oracle_sql_reproduces_gold_on_the_raw_folder(tmp_path: Path, key: str) -> None:
    if not (DEV_EN / "oracle.jsonl").is_file():
        pytest.skip(f"{DEV_EN} is absent (only present beside the project's own checkout)")
    entries = oracle(DEV_EN)
    assert len(entries) == 40
    runner = CliRunner()
    failures = {}
    for entry in entries:
        prediction = tmp_path / f"{entry['task_id']}.csv"
        result = runner.invoke(cli, ["sql", str(DEV_EN / "input" / entry["task_id"]), "--csv", str(prediction),
                                     "--limit", "0", "--", entry[key]])
        if result.exit_code != 0:
            failures[entry["task_id"]] = result.output[-300:]
            continue
        gold = gold_spelled_as_sql(DEV_EN / "output" / entry["task_id"] / "gold.csv", tmp_path / entry["task_id"])
        score = score_files(prediction, gold)
        if score.score != 1.0:
            failures[entry["task_id"]] = score
    assert failures == {}
