"""task.json is read once per task: the Task from discovery travels to prepare, the scaffold, the
documents, the brief and the answer checks, which take its question instead of reading the file.
Likewise the scratch's layout, made by prepare, travels down the pipeline instead of being rebuilt."""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import io
import os
import shutil
import sys
from pathlib import Path

import pytest

from datasolver import examples
from datasolver.agent import solve_task
from tests.helpers.agent import fake_client
from datasolver.data import ScratchLayout, load_task
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedModel
from datasolver.pipeline import RunConfig, run_batch_sync
from datasolver.pipeline.documents import prepare_task_documents
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import TINY_QUESTION, make_tiny_task

# A task with a document: the documents stage writes tables, so the scaffold is written twice.
DOC_TASK = "task_demo_weather"


@pytest.fixture
def task_json_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every open for reading of a file named task.json in this process from now on
    (`Path.read_text` and `shutil.copyfile` both open through `io.open`, the builtin `open`)."""
    opened: list[str] = []
    original = io.open

    def counting_open(file, mode="r", *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and Path(file).name == "task.json" and "r" in mode:
            opened.append(str(file))
        return original(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    return opened


@pytest.fixture
def layouts_from_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions that build a ScratchLayout from a scratch path through `ScratchLayout.of`
    from now on (handed a layout, `of` builds nothing)."""
    built: list[str] = []
    original = ScratchLayout.of.__func__

    def recording_of(cls, task_scratch_dir, **kwargs):
        if not isinstance(task_scratch_dir, ScratchLayout):
            built.append(sys._getframe(1).f_code.co_name)
        return original(cls, task_scratch_dir, **kwargs)

    monkeypatch.setattr(ScratchLayout, "of", classmethod(recording_of))
    return built


def test_a_scripted_run_opens_each_task_json_twice_a_parse_and_a_copy(
    tmp_path: Path, task_json_opens, layouts_from_paths
) -> None:
    input_dir = tmp_path / "input"
    shutil.copytree(examples.input_dir() / DOC_TASK, input_dir / DOC_TASK)
    with ScriptedModel(handler=solver_handler(examples.demo_answers())) as server:
        settings = LLMSettings(**server.connection(), api_key="sk-test", model="fake-model", max_retries=1,
                               initial_backoff=0.0, max_backoff=0.0)
        task_json_opens.clear()  # the scripted model's own reading of the questions is not the program's
        layouts_from_paths.clear()
        summary = run_batch_sync(RunConfig(input_dir=input_dir, output_dir=tmp_path / "out", logs_dir=tmp_path / "logs",
                                           settings=settings, workers=1, task_timeout_s=120.0, doc_llm=False))
    assert summary.counts()["solved"] == 1
    record = summary.tasks[0]
    assert record.document_tables >= 1  # the documents stage wrote tables and re-scaffolded solver.py
    # Discovery parses the input's task.json (read within its cap); prepare may copy it into the
    # scratch folder for people. Nothing else opens either file: the Task travels.
    source = str(input_dir / DOC_TASK / "task.json")
    assert set(task_json_opens) == {source} and len(task_json_opens) <= 2  # at most a parse and a copy
    # prepare makes the layout, and documents, scaffold, the solver's TaskRun (brief, toolbox,
    # attempts) get it: no stage builds it again from the path.
    assert layouts_from_paths == ["prepare_scratch"]


def test_every_stage_takes_the_question_from_the_task_not_from_the_file(tmp_path: Path, task_json_opens) -> None:
    asked = "Which cities have orders? (as the Task object words it)"
    task = dataclasses.replace(load_task(make_tiny_task(tmp_path / "input")), question=asked)
    task_json_opens.clear()
    scratch = prepare_task(task, tmp_path / "scratch")
    prepare_task_documents(ScratchLayout.of(scratch), task=task)
    solver_py = ScratchLayout.of(scratch).solver_py.read_text(encoding="utf-8")
    assert asked in solver_py and TINY_QUESTION not in solver_py
    with SolverToolbox(ScratchLayout.of(scratch), task=task) as toolbox:
        assert toolbox.context.task.question == asked  # what run_solver's answer checks are given

    # The scripted model knows the task by the Task's wording only.
    answer = ScriptedAnswer(task.task_id, "SELECT city, COUNT(*) AS orders FROM orders GROUP BY city ORDER BY city",
                            asked)
    with ScriptedModel(handler=solver_handler([answer])) as server:
        from datasolver.agent import TaskRun

        run = TaskRun(task, ScratchLayout.of(scratch).require(), fake_client(server), tmp_path / "out")
        outcome = asyncio.run(solve_task(run))
        first_prompt = str(server.requests[0])
    assert outcome.status == "solved", outcome.reason
    assert asked in first_prompt and TINY_QUESTION not in first_prompt
    # Only prepare's copy for people opened a task.json; every stage had the Task.
    assert task_json_opens == [str(task.dir / "task.json")]
