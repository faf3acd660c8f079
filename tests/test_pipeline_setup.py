"""One task setup from a run's settings, for the local and the Ray executor alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.agent import Limits
from datasolver.llm import LLMSettings, ServerFacts
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.task import TaskSetup
from datasolver.pipeline.votes import VotePolicy

if TYPE_CHECKING:
    from datasolver.agent import TaskRun


def _config(tmp_path: Path, **changes) -> RunConfig:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key="k", context_window=8192)
    return RunConfig(input_dir=tmp_path / "in", output_dir=tmp_path / "out", logs_dir=tmp_path / "logs",
                     settings=settings, limits=Limits(max_attempts=2), doc_llm=False,
                     votes=VotePolicy(votes=3), **changes)


def test_a_setup_carries_every_run_setting_the_task_needs(tmp_path: Path) -> None:
    config = _config(tmp_path)
    setup = TaskSetup.from_config(config, scratch_root=tmp_path / "scratch")
    assert (setup.output_dir, setup.logs_dir, setup.settings) == (config.output_dir, config.logs_dir, config.settings)
    assert (setup.limits, setup.doc_llm, setup.votes) == (config.limits, False, config.votes)
    assert setup.scratch_root == tmp_path / "scratch" and setup.keep_scratch is False
    # Without facts shared by the executor, the configured window still starts the task's own.
    assert setup.facts is not None and setup.facts.context_window == 8192


def test_scratch_is_kept_when_asked_or_when_it_is_the_users_folder(tmp_path: Path) -> None:
    keep = TaskSetup.from_config(_config(tmp_path, keep_scratch=True), scratch_root=tmp_path)
    given = TaskSetup.from_config(_config(tmp_path, scratch_dir=tmp_path), scratch_root=tmp_path)
    assert keep.keep_scratch and given.keep_scratch


def test_shared_facts_are_passed_on_untouched(tmp_path: Path) -> None:
    facts = ServerFacts(4096)
    setup = TaskSetup.from_config(_config(tmp_path), scratch_root=tmp_path, facts=facts)
    assert setup.facts is facts
    fields = {f.name for f in dataclasses.fields(TaskSetup)}
    assert fields == {"scratch_root", "output_dir", "logs_dir", "settings", "limits", "doc_llm", "solver",
                      "keep_scratch", "request_gate", "facts", "votes", "run_id"}, "a new field needs a line in from_config"


def _run(task, setup, plan):
    import asyncio

    from datasolver.pipeline.task import planned, run_task

    return asyncio.run(run_task(task, setup, solve_turn=planned(plan)))


def _events(logs: Path, task_id: str) -> list[dict]:
    import json

    lines = (logs / task_id / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_task_that_cannot_be_prepared_gets_one_record_from_the_stages_outcomes(tmp_path: Path) -> None:
    """The prepare stage says why it failed; the solve stage then runs nothing; run_task builds the
    one record (with the plan's mode) and the trace ends with it."""
    import shutil
    import time

    from datasolver.data import load_task
    from datasolver.pipeline.budget import TaskPlan
    from tests.helpers.solver import make_tiny_task

    task = load_task(make_tiny_task(tmp_path / "in"))
    shutil.rmtree(task.dir)  # gone between discovery and preparing
    setup = TaskSetup.from_config(_config(tmp_path), scratch_root=tmp_path / "scratch")
    record = _run(task, setup, TaskPlan("fast", time.monotonic() + 60))
    assert (record.task_id, record.status, record.mode, record.attempts, record.requests) == (task.task_id, "failed",
                                                                                                 "fast", 0, 0)
    assert record.reason == record.error and record.error.startswith("TaskError") and "no task.json" in record.error
    end = _events(tmp_path / "logs", task.task_id)[-1]
    assert end["event"] == "task_end" and end["status"] == "failed" and end["reason"] == record.reason


def test_a_fallback_only_plan_gives_the_fallbacks_outcome_as_the_record(tmp_path: Path) -> None:
    import time

    from datasolver.data import load_task
    from datasolver.pipeline.budget import TaskPlan
    from tests.helpers.solver import make_tiny_task

    task = load_task(make_tiny_task(tmp_path / "in"))
    setup = TaskSetup.from_config(_config(tmp_path), scratch_root=tmp_path / "scratch")
    record = _run(task, setup, TaskPlan("fallback_only", time.monotonic(), "time budget spent"))
    assert (record.status, record.mode, record.prediction) == ("failed", "fallback_only", None)
    assert record.reason == "time budget spent; fallback run of the current solver.py: NO OUTPUT (`result` is still None)"
    assert record.error is None and not (tmp_path / "scratch" / task.task_id).exists()  # a temporary copy is removed


def _recording_solver(received: list, returned: list | None = None):
    """A solver that keeps the run it is given (and the outcome it returns) and answers with a
    one-line prediction."""
    from datasolver.agent import SolveOutcome

    async def solve(run: TaskRun) -> SolveOutcome:
        received.append(run)
        target = run.output_dir / run.task.task_id / "prediction.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("answer\n1\n", encoding="utf-8")
        outcome = SolveOutcome(run.task.task_id, "solved", 2, 0, {}, 0.0, target, None)
        (returned if returned is not None else []).append(outcome)
        return outcome

    return solve


def _both_stages(task, setup, plan):
    import asyncio

    from datasolver.pipeline.task import prepare_stage, solve_stage

    async def stages():
        prepared = await prepare_stage(task, setup)
        return prepared, await solve_stage(prepared, setup, plan)

    return asyncio.run(stages())


def test_the_solver_gets_the_one_run_the_pipeline_gathered(tmp_path: Path) -> None:
    """The pipeline gathers the task's TaskRun once and hands it over as it is: the layout prepare
    made and the Task discovery read (the same objects), a client whose trace and usage are the
    task's, the task's limits; no solver rebuilds any of it from a path."""
    import time

    from datasolver.data import load_task
    from datasolver.pipeline.budget import TaskPlan
    from datasolver.pipeline.config import FAST_MAX_ATTEMPTS
    from tests.helpers.solver import make_tiny_task

    received: list = []
    returned: list = []
    task = load_task(make_tiny_task(tmp_path / "in"))
    setup = dataclasses.replace(TaskSetup.from_config(_config(tmp_path, keep_scratch=True), scratch_root=tmp_path / "scratch"),
                                solver=_recording_solver(received, returned))
    plan = TaskPlan("fast", time.monotonic() + 60)
    prepared, result = _both_stages(task, setup, plan)
    (run,) = received
    assert run.layout is prepared.layout and run.task is task
    assert run.trace is prepared.trace and run.client.usage is prepared.usage
    assert run.output_dir == setup.output_dir and dict(run.chat_options) == {}
    assert run.limits.max_attempts == min(2, FAST_MAX_ATTEMPTS) and run.deadline.at <= plan.deadline
    assert result is returned[0]  # the solver's outcome, consumed as it is (no copy into another type)
    assert (result.status, result.attempts) == ("solved", 2)
    assert result.prediction == setup.output_dir / task.task_id / "prediction.csv"


def test_each_voting_solve_gets_the_tasks_run_with_its_own_folder_and_temperature(tmp_path: Path) -> None:
    import time

    from datasolver.data import load_task
    from datasolver.pipeline.budget import TaskPlan
    from tests.helpers.solver import make_tiny_task

    received: list = []
    task = load_task(make_tiny_task(tmp_path / "in"))
    setup = dataclasses.replace(TaskSetup.from_config(_config(tmp_path, keep_scratch=True), scratch_root=tmp_path / "scratch"),
                                solver=_recording_solver(received))
    prepared, result = _both_stages(task, setup, TaskPlan("full", time.monotonic() + 60))
    assert len(received) == 2  # the second solve agrees with the first: no third
    layout = prepared.layout
    for number, run in enumerate(received, 1):
        assert run.layout is layout and run.task is task and run.trace is prepared.trace
        assert run.output_dir == layout.votes / f"solve_{number}"
        assert dict(run.chat_options) == {"temperature": setup.votes.temperature_of(number)}
    # The first solve may take a third of the time left, the second half of what is left then.
    assert received[0].deadline.at < received[1].deadline.at
    assert (result.status, result.attempts) == ("solved", 4)
    assert result.prediction == setup.output_dir / task.task_id / "prediction.csv"
    assert result.vote is not None and result.vote["how"] == "agreement"
