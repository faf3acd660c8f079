"""Issue 26, one view of a task's tables: on the RAW dev and dev-en folders (nothing prepared),
`datasolver tables` lists every table of the task (the oracle's n_tables_total) with an exact row
count, among them every table the oracle needs, document tables included, and `datasolver sql TASK --csv OUT -- "<oracle sql>"` reproduces gold.csv (scored by the
project's scorer). Skips without ../shared."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data.names import canonical_name
from datasolver.eval import score_files
from tests.helpers.devsets import gold_spelled_as_sql, oracle, task_set

SETS = ["dev", "dev-en"]
_LISTING = re.compile(r"^(\S+)\s+rows\s+(\S+)\s+cols\s+(\S+)\s+(.*)$")


def _tasks(name: str) -> tuple[Path, list[dict]]:
    root = task_set(name)
    if not (root / "oracle.jsonl").is_file():
        pytest.skip(f"{root} is absent (only present beside the project's own checkout)")
    return root, oracle(root)


def _pipe_table_rows(doc: Path) -> int:
    """Body rows of the one pipe table in a dev document, counted here without the extractor."""
    lines = [line for line in doc.read_text(encoding="utf-8").splitlines() if line.lstrip().startswith("|")]
    return len(lines) - 2  # header and delimiter row


@pytest.mark.slow
@pytest.mark.xdist_group("dev-tables")  # with test_data_dev_tasks: the dev listing is made once, on one worker
@pytest.mark.parametrize("name", SETS)
def test_tables_lists_every_oracle_table_with_its_row_count(name: str, dev_tables) -> None:
    root, oracle = _tasks(name)
    listings = dev_tables(name)  # `datasolver tables` on each raw task folder, listed once per test run
    missing, docs_checked = [], 0
    for entry in oracle:
        task = root / "input" / entry["task_id"]
        exit_code, output = listings[entry["task_id"]]
        assert exit_code == 0, (entry["task_id"], output)
        listed = {m[1]: m for m in map(_LISTING.match, output.splitlines()) if m}
        # every table of the task, each with an exact row count, and no document left unread
        assert len(listed) == entry["n_tables_total"], (entry["task_id"], output)
        assert all(m[2].isdigit() for m in listed.values()), (entry["task_id"], output)
        assert "unread document:" not in output, (entry["task_id"], output)
        for table in entry["tables"].values():
            m = listed.get(canonical_name(table["name"]))
            if m is None or not m[2].isdigit():
                missing.append((entry["task_id"], table["name"], m[0] if m else None))
            elif table["format"] == "doc":
                docs_checked += 1
                assert int(m[2]) == _pipe_table_rows(task / "context" / table["file"]), (entry["task_id"], m[0])
                assert f"origin: {table['file']} lines" in m[0], m[0]
    assert missing == []
    assert docs_checked >= 8  # each set has 8 tasks whose needed table exists only in doc/*.md


@pytest.mark.slow
@pytest.mark.parametrize("name", SETS)
def test_oracle_sql_on_the_raw_folder_reproduces_gold(name: str, tmp_path: Path) -> None:
    root, oracle = _tasks(name)
    runner = CliRunner()
    scores = {}
    for entry in oracle:
        out = tmp_path / f"{entry['task_id']}.csv"
        result = runner.invoke(cli, ["sql", str(root / "input" / entry["task_id"]), "--csv", str(out), "--", entry["sql"]])
        assert result.exit_code == 0, (entry["task_id"], result.output)
        gold = gold_spelled_as_sql(root / "output" / entry["task_id"] / "gold.csv", tmp_path / entry["task_id"])
        scores[entry["task_id"]] = score_files(out, gold).score  # booleans as SQL spells them
    assert len(scores) == 40
    assert {t: s for t, s in scores.items() if s != 1.0} == {}
