"""Resume: finished tasks (a prediction exists) are skipped unless forced; the rest run."""

from __future__ import annotations

import pytest

from datasolver.data import discover_tasks
from datasolver.pipeline import run_batch_sync
from datasolver.pipeline.resume import split_for_resume
from datasolver.solver import has_prediction
from datasolver.llm.fake import ScriptedModel
from tests.helpers.pipeline import copy_examples, examples_server, make_config


@pytest.fixture
def example_server():
    """The examples' scripted model at the client's transport: these batches run in this process."""
    with examples_server(face=ScriptedModel) as server:
        yield server


def test_a_second_run_skips_finished_tasks_and_asks_the_model_nothing(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    config = make_config(example_server, input_dir, tmp_path)
    run_batch_sync(config)
    first_requests = len(example_server.requests)
    prediction = tmp_path / "out" / "task_demo_sales" / "prediction.csv"
    written = prediction.stat().st_mtime_ns

    summary = run_batch_sync(config)
    assert len(example_server.requests) == first_requests
    assert summary.counts() == {"solved": 0, "fallback": 0, "failed": 0, "skipped": 3}
    assert {r.mode for r in summary.tasks} == {"resume"}
    assert summary.usage()["requests"] == 0
    assert prediction.stat().st_mtime_ns == written


def test_only_unfinished_tasks_run_again(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    config = make_config(example_server, input_dir, tmp_path)
    run_batch_sync(config)
    (tmp_path / "out" / "task_demo_library" / "prediction.csv").unlink()
    # An empty file is an interrupted write, not an answer.
    (tmp_path / "out" / "task_demo_weather" / "prediction.csv").write_text("")
    before = len(example_server.requests)

    summary = run_batch_sync(config)
    statuses = {r.task_id: r.status for r in summary.tasks}
    assert statuses == {"task_demo_library": "solved", "task_demo_sales": "skipped", "task_demo_weather": "solved"}
    assert len(example_server.requests) - before == 12


def test_force_redoes_every_task(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    run_batch_sync(make_config(example_server, input_dir, tmp_path))
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path, force=True))
    assert summary.counts()["solved"] == 3
    assert len(example_server.requests) == 36


def test_split_for_resume(tmp_path):
    tasks = discover_tasks(copy_examples(tmp_path)).tasks
    out = tmp_path / "out"
    (out / "task_demo_sales").mkdir(parents=True)
    (out / "task_demo_sales" / "prediction.csv").write_text("a\n1\n")
    todo, done = split_for_resume(tasks, out)
    assert [t.task_id for t in done] == ["task_demo_sales"]
    assert [t.task_id for t in todo] == ["task_demo_library", "task_demo_weather"]
    todo, done = split_for_resume(tasks, out, force=True)
    assert done == [] and len(todo) == 3
    assert has_prediction(out, "task_demo_sales") and not has_prediction(out, "task_demo_library")
