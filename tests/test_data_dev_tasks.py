"""The engine on the real dev tasks: every table lists, and each oracle SQL reproduces gold.csv."""

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog, discover_tasks
from datasolver.eval import score_files
from tests.helpers.devsets import oracle


def _needs_document(entry) -> bool:
    return any(t["format"] == "doc" for t in entry["tables"].values())


@pytest.mark.slow
@pytest.mark.xdist_group("dev-tables")  # on the worker that lists the set (no waiting for another)
def test_every_dev_task_lists_its_tables_without_unreadable_files(dev_tasks, dev_tables):
    found = discover_tasks(dev_tasks / "input")
    assert len(found.tasks) == 40 and not found.errors
    listings = dev_tables("dev")  # `datasolver tables` on each task, shared with test_dev_task_views
    assert sorted(listings) == sorted(task.dir.name for task in found.tasks)
    runner = CliRunner()
    for task in found.tasks:
        exit_code, output = listings[task.dir.name]
        assert exit_code == 0, (task.task_id, output)
        assert "unreadable:" not in output, (task.task_id, output)
        first_table = output.split()[0]
        sql = runner.invoke(cli, ["sql", str(task.dir), f'SELECT count(*) FROM "{first_table}"'])
        assert sql.exit_code == 0 and sql.stdout.splitlines()[0] == "count_star()", (task.task_id, sql.output)


def test_oracle_sql_reproduces_gold(dev_tasks, tmp_path):
    entries = [e for e in oracle(dev_tasks) if not _needs_document(e)]
    assert len(entries) >= 30
    failures = []
    for entry in entries:
        task_id = entry["task_id"]
        with Catalog.open(dev_tasks / "input" / task_id) as cat:
            df = cat.sql(entry["sql"]).df()
        pred = tmp_path / task_id / "prediction.csv"
        pred.parent.mkdir()
        df.to_csv(pred, index=False, encoding="utf-8")
        score = score_files(pred, dev_tasks / "output" / task_id / "gold.csv")
        if score.score != 1.0:
            failures.append((task_id, score))
    assert failures == []


@pytest.mark.parametrize("needed_format", ["csv", "json", "db"])
def test_each_source_format_is_covered_by_the_oracle_run(dev_tasks, needed_format):
    formats = {t["format"] for e in oracle(dev_tasks) if not _needs_document(e) for t in e["tables"].values()}
    assert needed_format in formats
