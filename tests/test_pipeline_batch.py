"""run_batch against the scripted server: answers, failures that do not stop the batch,
deadlines and the fallback, the time budget, the input left untouched, the summary."""

from __future__ import annotations

import json

import pytest

from datasolver import examples
from datasolver.eval import evaluate_dir
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm.fake import ScriptedModel, delay, text
from datasolver.pipeline import run_batch_sync
from datasolver.pipeline.errors import InputError, OutputError, UnknownTasks
from datasolver.pipeline.summary import load_summary
from tests.helpers.pipeline import (
    add_task,
    answers_with,
    copy_examples,
    examples_server,
    make_config,
    snapshot,
)


@pytest.fixture
def example_server():
    """The examples' scripted model at the client's transport: these batches run in this process."""
    with examples_server(face=ScriptedModel) as server:
        yield server


EXAMPLE_IDS = ["task_demo_library", "task_demo_sales", "task_demo_weather"]


def test_examples_are_solved_and_score_one(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path))
    assert summary.counts() == {"solved": 3, "fallback": 0, "failed": 0, "skipped": 0}
    report = evaluate_dir(tmp_path / "out", examples.gold_dir())
    assert {t.task_id: t.score for t in report.tasks if t.task_id in EXAMPLE_IDS} == dict.fromkeys(EXAMPLE_IDS, 1.0)
    # Six model turns per task: two explore_data, read, edit, run, final text.
    assert [r.requests for r in sorted(summary.tasks, key=lambda r: r.task_id)] == [6, 6, 6]
    assert summary.usage()["requests"] == 18 == len(example_server.requests)
    assert example_server.errors == []
    # One run_solver per task, each forked from the batch's fork server.
    assert summary.sandbox == {"fork_server": "on", "warm_runs": 3}


def test_a_batch_without_a_shared_fork_server_starts_its_own(example_server, tmp_path):
    from datasolver.sandbox.fork_server import use_fork_server

    input_dir = copy_examples(tmp_path)
    with use_fork_server(None):  # not the test session's zygote: the batch makes and starts one
        summary = run_batch_sync(make_config(example_server, input_dir, tmp_path))
    assert summary.counts()["solved"] == 3
    assert summary.sandbox == {"fork_server": "on", "warm_runs": 3}


def test_cold_runs_give_the_same_answers(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path, warm_runs=False))
    assert summary.counts() == {"solved": 3, "fallback": 0, "failed": 0, "skipped": 0}
    report = evaluate_dir(tmp_path / "out", examples.gold_dir())
    assert {t.task_id: t.score for t in report.tasks if t.task_id in EXAMPLE_IDS} == dict.fromkeys(EXAMPLE_IDS, 1.0)
    assert summary.sandbox == {"fork_server": "off", "warm_runs": 0}


def test_summary_file_records_every_task_and_usage(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    config = make_config(example_server, input_dir, tmp_path)
    summary = run_batch_sync(config)
    data = load_summary(tmp_path / "logs" / "run_summary.json")
    assert data["finished"] is True
    assert data["counts"] == summary.counts()
    assert data["usage"]["requests"] == 18 and data["usage"]["total_tokens"] > 0
    assert [t["task_id"] for t in data["tasks"]] == EXAMPLE_IDS
    for task in data["tasks"]:
        assert set(task) >= {"status", "attempts", "requests", "tokens", "seconds", "reason", "usage"}
        assert task["status"] == "solved" and task["attempts"] == 1 and task["reason"] is None
        assert task["tokens"] == task["usage"]["total_tokens"] > 0
        assert task["prediction"] == str(tmp_path / "out" / task["task_id"] / "prediction.csv")
    assert data["model"] == "fake-model"
    assert "sk-test-secret-123" not in json.dumps(data)


def test_traces_go_to_logs_per_task_without_the_key(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    run_batch_sync(make_config(example_server, input_dir, tmp_path))
    for task_id in EXAMPLE_IDS:
        trace = (tmp_path / "logs" / task_id / "trace.jsonl").read_text(encoding="utf-8")
        events = [json.loads(line)["event"] for line in trace.splitlines()]
        assert events[0] == "task_start" and events[-1] == "task_end"
        assert "tool_call" in events and "prediction_published" in events
        assert "sk-test-secret-123" not in trace


def test_input_folder_bytes_are_unchanged_after_a_run(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    before = snapshot(input_dir)
    run_batch_sync(make_config(example_server, input_dir, tmp_path, keep_scratch=True))
    assert snapshot(input_dir) == before


def test_a_task_that_raises_in_the_worker_is_recorded_and_the_batch_goes_on(example_server, tmp_path):
    from datasolver.agent import SolveOutcome, TaskRun, solve_task

    input_dir = copy_examples(tmp_path)

    async def flaky_solver(run: TaskRun) -> SolveOutcome:
        if run.task.task_id == "task_demo_sales":
            raise RuntimeError("boom inside the worker")
        return await solve_task(run)

    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path), solver=flaky_solver)
    records = {r.task_id: r for r in summary.tasks}
    assert records["task_demo_library"].status == records["task_demo_weather"].status == "solved"
    failed = records["task_demo_sales"]
    assert failed.status == "failed"
    assert failed.error == "RuntimeError: boom inside the worker"
    # The pipeline still gave it the fallback run (a pristine scaffold writes nothing).
    assert "agent raised RuntimeError: boom inside the worker; fallback run of the current solver.py: NO OUTPUT" in failed.reason
    assert not (tmp_path / "out" / "task_demo_sales").exists()
    saved = {t["task_id"]: t for t in load_summary(tmp_path / "logs" / "run_summary.json")["tasks"]}
    assert saved["task_demo_sales"]["error"] == "RuntimeError: boom inside the worker"


def test_an_exception_after_the_agent_edited_solver_py_still_yields_the_fallback_answer(example_server, tmp_path):
    from datasolver.agent import TaskRun, solve_task

    input_dir = copy_examples(tmp_path)

    async def crash_after_solving(run: TaskRun):
        outcome = await solve_task(run)
        outcome.prediction.unlink()  # as if the crash came before publishing
        raise OSError("disk hiccup")

    config = make_config(example_server, input_dir, tmp_path, task_ids=("task_demo_weather",))
    summary = run_batch_sync(config, solver=crash_after_solving)
    (record,) = summary.tasks
    assert record.status == "fallback" and record.error == "OSError: disk hiccup"
    assert (tmp_path / "out" / "task_demo_weather" / "prediction.csv").read_text().splitlines()[0] == (
        "station_name,avg_tmax_c"
    )


def test_a_task_whose_id_cannot_name_a_folder_is_left_out_alone(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    # Checked at discovery, before any folder is made or trace line written (docs/security.md).
    add_task(input_dir, "bad id/..", "How many?", "n\n1\n", folder="task_bad")
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path))
    assert "bad id/.." not in {r.task_id for r in summary.tasks}
    (error,) = summary.discovery_errors
    assert error["folder"].endswith("task_bad") and "task_id 'bad id/..' cannot name a folder" in error["reason"]
    assert summary.counts()["solved"] == 3


def test_malformed_task_folders_are_listed_in_the_summary(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    (input_dir / "task_broken").mkdir()
    (input_dir / "task_broken" / "task.json").write_text("{not json", encoding="utf-8")
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path))
    assert summary.counts()["solved"] == 3
    (error,) = summary.discovery_errors
    assert error["folder"].endswith("task_broken") and "not valid UTF-8 JSON" in error["reason"]


def test_the_deadline_stops_a_slow_task_and_its_fallback_answers(tmp_path, monkeypatch):
    # The model edits solver.py, then stalls (a minute) before run_solver: the agent stops at the
    # deadline and its fallback runs the edited solver.py. The deadline's clock stands still at the
    # start, so preparing and the first turns cost none of the task's 1 s however busy the
    # machine; only the stalled request waits them out.
    import functools
    import time

    from datasolver.agent import Deadline

    input_dir = copy_examples(tmp_path)
    answers = examples.demo_answers()
    solve = solver_handler(answers)

    def slow_before_run(request):
        turn = solve(request)
        if getattr(turn, "calls", None) and turn.calls[0].name == "run_solver":
            return delay(60, turn)
        return turn

    start = time.monotonic()
    monkeypatch.setattr("datasolver.pipeline.task.Deadline", functools.partial(Deadline, clock=lambda: start))
    with ScriptedModel(handler=slow_before_run) as server:
        config = make_config(server, input_dir, tmp_path, task_timeout_s=1.0, task_ids=("task_demo_sales",))
        summary = run_batch_sync(config)
    (record,) = summary.tasks
    assert record.status == "fallback"  # the stalled run_solver never answered: it would have solved it
    assert "deadline reached in attempt 1" in record.reason
    report = evaluate_dir(tmp_path / "out", examples.gold_dir())
    assert [t.score for t in report.tasks if t.task_id == "task_demo_sales"] == [1.0]


def test_an_agent_that_ignores_its_deadline_is_stopped_and_the_fallback_runs(example_server, tmp_path, monkeypatch):
    import asyncio

    from datasolver.agent import Limits
    from datasolver.pipeline import task as task_module

    monkeypatch.setattr(task_module, "HARD_STOP_MARGIN_S", 0.0)
    input_dir = copy_examples(tmp_path)

    async def hangs(run):
        await asyncio.sleep(3600)

    # Fractions of a second: the agent (which never returns) is stopped 0.2 s after its deadline.
    config = make_config(example_server, input_dir, tmp_path, task_timeout_s=0.5,
                         limits=Limits(tool_timeout_s=0.1), task_ids=("task_demo_sales",))
    summary = run_batch_sync(config, solver=hangs)
    (record,) = summary.tasks
    assert record.status == "failed"
    assert record.error == "hard stop: the agent was still running 0.2s after its deadline"
    assert record.reason.startswith(record.error + "; fallback run of the current solver.py: NO OUTPUT")


def test_a_spent_time_budget_leaves_only_the_fallback_run(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path, time_budget_s=5.0))
    assert len(example_server.requests) == 0
    for record in summary.tasks:
        assert record.mode == "fallback_only" and record.requests == 0
        assert record.status == "failed"
        assert record.reason.startswith("time budget spent") and "fallback run of the current solver.py: NO OUTPUT" in record.reason


def test_fast_mode_gives_the_agent_one_attempt(monkeypatch, tmp_path):
    # The model only talks, so every attempt is rejected (its prose is sent back once, then ends the
    # attempt: two requests each): full mode uses all 3 attempts, fast mode 1. A huge duration estimate makes the budget look short from the second task on.
    from datasolver.agent import Limits
    from datasolver.pipeline.budget import TimeBudget

    estimates = iter([None] + [1e6] * 10)
    monkeypatch.setattr(TimeBudget, "estimate", lambda self: next(estimates))
    input_dir = copy_examples(tmp_path)
    with ScriptedModel(handler=lambda request: text("I cannot help.")) as server:
        config = make_config(server, input_dir, tmp_path, workers=1, limits=Limits(max_attempts=3),
                             time_budget_s=3600.0)
        summary = run_batch_sync(config)
    modes = {r.task_id: (r.mode, r.attempts, r.requests) for r in summary.tasks}
    assert modes == {
        "task_demo_library": ("full", 3, 6),
        "task_demo_sales": ("fast", 1, 2),
        "task_demo_weather": ("fast", 1, 2),
    }
    assert all(r.status == "failed" for r in summary.tasks)
    assert len(server.requests) == 10 == sum(r.requests for r in summary.tasks)


def test_unknown_task_ids_are_rejected_before_any_work(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    with pytest.raises(UnknownTasks, match=r"no task named task_nope in the input folder; tasks: task_demo_library"):
        run_batch_sync(make_config(example_server, input_dir, tmp_path, task_ids=("task_nope",)))
    assert not (tmp_path / "out").exists() and example_server.requests == []


def test_an_output_folder_inside_the_input_is_refused(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    before = snapshot(input_dir)
    with pytest.raises(OutputError, match="inside the input folder"):
        run_batch_sync(make_config(example_server, input_dir, tmp_path, output_dir=input_dir / "out"))
    assert snapshot(input_dir) == before


def test_an_empty_input_folder_is_an_input_error(example_server, tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no task_\\* folder with a task.json in"):
        run_batch_sync(make_config(example_server, tmp_path / "empty", tmp_path))


def test_tasks_selected_by_id_run_alone(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    summary = run_batch_sync(make_config(example_server, input_dir, tmp_path, task_ids=("task_demo_library",)))
    assert [r.task_id for r in summary.tasks] == ["task_demo_library"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["task_demo_library"]


def test_a_task_the_model_cannot_solve_fails_alone_and_a_new_one_is_solved(tmp_path):
    input_dir = copy_examples(tmp_path)
    add_task(input_dir, "task_extra", "What is the total of n?", "n\n1\n2\n")
    add_task(input_dir, "task_unscripted", "What is the largest n?", "n\n5\n7\n")
    extra = ScriptedAnswer("task_extra", "SELECT SUM(n) AS total FROM numbers", "What is the total of n?")
    with ScriptedModel(handler=solver_handler(answers_with(extra))) as server:
        summary = run_batch_sync(make_config(server, input_dir, tmp_path, workers=5))
    records = {r.task_id: r for r in summary.tasks}
    assert summary.counts() == {"solved": 4, "fallback": 0, "failed": 1, "skipped": 0}
    assert records["task_unscripted"].attempts == 5  # the agent's default, each one rejected
    assert "fallback skipped: solver.py was never edited" in records["task_unscripted"].reason
    assert (tmp_path / "out" / "task_extra" / "prediction.csv").read_text().splitlines()[0] == "total"


def test_the_first_prompt_names_each_document_table_once(example_server, tmp_path):
    # The brief reads the document-table hints itself; the pipeline does not repeat them as evidence.
    input_dir = copy_examples(tmp_path)
    run_batch_sync(make_config(example_server, input_dir, tmp_path, task_ids=("task_demo_weather",)))
    first = example_server.requests[0]["messages"][1]["content"]
    assert first.count("Document tables:") == 1
    # its line under Tables gives rows, source and columns; the hint adds how it was extracted
    assert "stations: 3 rows, in derived/ (doc/stations.md lines 6-10)" in first
    assert "\n- stations: Markdown table\n" in first and "from doc/stations.md" not in first
