"""Several runs into one logs folder: each keeps its own summary, the report shows one run at a time
(the latest, or the one named) from that run's part of each trace, and replay still works.

What a person sees: the files in the logs folder, `datasolver report` (`--run`), the page.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.report.load import load_run
from datasolver.run_logs import is_run_id, new_run_id, summary_name
from datasolver.llm.fake import SCRIPTED_BASE_URL
from tests.helpers.pipeline import copy_examples, examples_cli_model


@pytest.fixture(scope="module")
def server():
    with examples_cli_model() as running:
        yield running


def run(server, root: Path, *args: str):
    input_dir = root / "input" if (root / "input").is_dir() else copy_examples(root)
    result = CliRunner().invoke(cli, ["run", str(input_dir), str(root / "out"), "--logs", str(root / "logs"),
                                      "--api-url", SCRIPTED_BASE_URL, "--model", "fake-model", "--no-doc-llm",
                                      "--workers", "3", *args])
    assert result.exit_code == 0, result.output
    return json.loads((root / "logs" / "run_summary.json").read_text(encoding="utf-8"))


def summaries(logs: Path) -> list[str]:
    return sorted(p.name for p in logs.iterdir() if p.name.startswith("run_summary"))


def report(logs: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["report", str(logs), "--output", str(logs.parent / "report.html"), *args])
    page = (logs.parent / "report.html").read_text(encoding="utf-8") if result.exit_code == 0 else ""
    return result.exit_code, result.output, page


def test_a_second_run_keeps_the_first_runs_summary_and_the_report_shows_the_latest(server, tmp_path):
    first = run(server, tmp_path)
    first_file = tmp_path / "logs" / f"run_summary-{first['run_id']}.json"
    first_bytes = first_file.read_bytes()
    # The case: the same command again. Every task is skipped (it has a prediction).
    second = run(server, tmp_path)
    assert is_run_id(first["run_id"]) and is_run_id(second["run_id"]) and first["run_id"] < second["run_id"]
    assert summaries(tmp_path / "logs") == sorted(
        ["run_summary.json", f"run_summary-{first['run_id']}.json", f"run_summary-{second['run_id']}.json"])
    assert first_file.read_bytes() == first_bytes  # never rewritten by the later run
    assert second["counts"] == {"solved": 0, "fallback": 0, "failed": 0, "skipped": 3}
    assert json.loads((tmp_path / "logs" / f"run_summary-{second['run_id']}.json").read_text()) == second

    # The report shows the latest run: 3 skipped, and none of the first run's events or tokens.
    code, _, page = report(tmp_path / "logs")
    view = load_run(tmp_path / "logs")
    assert code == 0 and view.run_id == second["run_id"] and view.runs == [first["run_id"], second["run_id"]]
    assert [(t.status, t.requests, t.tokens, len(t.events)) for t in view.tasks] == [("skipped", 0, 0, 0)] * 3
    assert f"run {second['run_id']}; the logs folder holds 1 other run(s): {first['run_id']}" in page
    assert '<div class="card">solved<b>0</b></div>' in page and '<div class="card">skipped<b>3</b></div>' in page

    # The first run, named: what it did, with its traces.
    code, _, page = report(tmp_path / "logs", "--run", first["run_id"])
    view = load_run(tmp_path / "logs", run_id=first["run_id"])
    assert code == 0 and [t.status for t in view.tasks] == ["solved"] * 3
    asked = {t["task_id"]: (t.get("usage") or {}).get("requests", 0) for t in first["tasks"]}
    assert all(t.requests == asked[t.task_id] > 0 and t.events[0]["run_id"] == first["run_id"] for t in view.tasks)
    assert '<div class="card">solved<b>3</b></div>' in page


def test_run_ids_sort_by_start_even_within_one_millisecond_or_after_the_clock_went_back():
    # CI once started two runs in the same second and their random suffixes sorted the wrong way round.
    instant = datetime(2026, 12, 7, 12, 16, 51, 250_000, tzinfo=timezone.utc)
    ids = [new_run_id(instant)]
    for _ in range(30):  # every run at the same instant, each after the folder's latest
        ids.append(new_run_id(instant, after=ids[-1]))
    earlier_clock = new_run_id(instant - timedelta(hours=1), after=ids[-1])
    assert ids[0].startswith("20261207T121651Z-250")
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and earlier_clock > ids[-1]
    assert all(is_run_id(run_id) and summary_name(run_id) for run_id in ids + [earlier_clock])
    # Older ids (four hex digits, no milliseconds) and summaries kept from before run ids are followed too.
    assert new_run_id(instant, after="20261207T121651Z-ffff") > "20261207T121651Z-ffff"
    assert new_run_id(instant, after="20261207T121651Z-earlier") > "20261207T121651Z-earlier"
    assert new_run_id(instant, after="20261207T121651Z-zzzzzzzzzzzz").startswith("20261207T121652Z-")


def test_a_run_of_some_tasks_does_not_count_the_other_tasks_old_traces(server, tmp_path):
    first = run(server, tmp_path)
    second = run(server, tmp_path, "--tasks", "task_demo_sales", "--force")
    assert [t["task_id"] for t in second["tasks"]] == ["task_demo_sales"]
    view = load_run(tmp_path / "logs")
    assert [(t.task_id, t.status) for t in view.tasks] == [("task_demo_sales", "solved")]
    # Its trace holds both runs; the report takes this run's part.
    events = [json.loads(line) for line in (tmp_path / "logs" / "task_demo_sales" / "trace.jsonl").open()]
    assert [e["run_id"] for e in events if e["event"] == "task_start"] == [first["run_id"], second["run_id"]]
    assert view.tasks[0].events[0]["run_id"] == second["run_id"]
    assert len(load_run(tmp_path / "logs", run_id=first["run_id"]).tasks) == 3


def test_a_summary_from_before_run_ids_is_kept_under_its_start_time(server, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    old = {"finished": True, "started_at": "2026-11-30T08:15:00+00:00", "counts": {"solved": 2}, "tasks": []}
    old_text = json.dumps(old, indent=2) + "\n"
    (logs / "run_summary.json").write_text(old_text, encoding="utf-8")
    new = run(server, tmp_path)
    kept = logs / "run_summary-20261130T081500Z-earlier.json"
    assert kept.read_text(encoding="utf-8") == old_text
    assert summaries(logs) == sorted(["run_summary.json", kept.name, f"run_summary-{new['run_id']}.json"])
    assert load_run(logs, run_id="20261130T081500Z-earlier").summary["counts"] == {"solved": 2}


def test_replay_still_replays_after_a_resumed_run(server, tmp_path):
    run(server, tmp_path, "--tasks", "task_demo_sales")
    run(server, tmp_path, "--tasks", "task_demo_sales")  # skipped: the trace's last part is the first run's
    result = CliRunner().invoke(cli, ["replay", str(tmp_path / "logs"), str(tmp_path / "input"),
                                      str(tmp_path / "replayed"), "--tasks", "task_demo_sales"])
    assert result.exit_code == 0, result.output
    assert "task_demo_sales  identical" in result.output


# -- a logs folder is anyone's: `--run` names a run, never a path ---------------------------------

def test_report_run_names_only_runs_of_the_folder(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "run_summary-20261201T000000Z-ab12.json").write_text("{}", encoding="utf-8")
    for wanted in ("../../etc/passwd", "20261201T000000Z-ffff", "latest"):
        code, output, _ = report(logs, "--run", wanted)
        assert code == 1
        assert output == f"Error: no run {wanted!r} in {logs}; its runs: 20261201T000000Z-ab12\n"


def test_a_linked_or_deep_run_summary_is_a_note_not_a_read(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    secret = tmp_path / "secret.json"
    secret.write_text('{"model": "SECRET-MODEL"}', encoding="utf-8")
    os.symlink(secret, logs / "run_summary-20261201T000000Z-ab12.json")
    (logs / "run_summary-20261202T000000Z-cd34.json").write_text("[" * 200_000, encoding="utf-8")
    code, _, page = report(logs, "--run", "20261201T000000Z-ab12")
    assert code == 0 and "SECRET-MODEL" not in page
    assert "is a symlink; not followed" in page
    code, _, page = report(logs)  # no run_summary.json: the newest run's own file
    assert code == 0 and "run_summary-20261202T000000Z-cd34.json is unreadable (" in page
    assert "nested deeper than 100 levels" in page
