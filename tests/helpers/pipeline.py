"""Helpers of the pipeline tests: a scripted model that solves tasks through the real tools (at the
client's transport for a batch run in this process or a command through CliRunner, or over HTTP), the dev sets' oracle answers,
run configs pointing at it, and a byte-level snapshot of a folder."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from datasolver import examples
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedModel
from datasolver.pipeline import RunConfig
from tests.helpers.askcli import cli_model
from tests.helpers.devsets import oracle


def settings_for(server: ScriptedModel) -> LLMSettings:
    """Settings that reach the scripted model, over HTTP (a `ScriptedServer`) or at the transport."""
    # One retry with no backoff: a scripted failure must not slow the suite down.
    return LLMSettings(**server.connection(), api_key="sk-test-secret-123", model="fake-model",
                       max_retries=1, initial_backoff=0.0, max_backoff=0.0)


def make_config(server: ScriptedModel, input_dir: Path, tmp_path: Path, **changes) -> RunConfig:
    values = dict(input_dir=input_dir, output_dir=tmp_path / "out", logs_dir=tmp_path / "logs",
                  settings=settings_for(server), workers=3, task_timeout_s=120.0, doc_llm=False)
    values.update(changes)
    return RunConfig(**values)


def bearer_key(headers: dict[str, str]) -> str | None:
    """The key a request to the scripted server carried (`Authorization: Bearer KEY`)."""
    value = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
    return value.removeprefix("Bearer ") or None


VIDEO_EXAMPLE = "task_demo_video"


def copy_examples(tmp_path: Path, *, video: bool = False) -> Path:
    """A private copy of the bundled example input (tests may add broken tasks to it).

    Without `video`, the video example is left out: its video pass (OCR, ASR) would slow every
    pipeline test, and tests/test_video_pipeline.py covers it."""
    target = tmp_path / "input"
    ignore = None if video else (lambda folder, names: [n for n in names if n == VIDEO_EXAMPLE])
    shutil.copytree(examples.input_dir(), target, ignore=ignore)
    return target


def add_task(input_dir: Path, task_id: str, question: str, csv_text: str, folder: str | None = None) -> Path:
    """A one-CSV task folder."""
    task = input_dir / (folder or task_id)
    (task / "context" / "csv").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": task_id, "question": question}), encoding="utf-8")
    (task / "context" / "csv" / "numbers.csv").write_text(csv_text, encoding="utf-8")
    return task


@contextmanager
def examples_server(face: type[ScriptedModel] = ScriptedModel) -> Iterator[ScriptedModel]:
    """A scripted model that solves the bundled examples, at the client's transport (a batch run in
    this process: `make_config`) or, with `face=ScriptedServer`, over HTTP (workers in processes of
    their own, Ray; wrap it in a fixture). `datasolver run` through CliRunner reaches it with
    `examples_cli_model`."""
    with face(handler=solver_handler(examples.demo_answers())) as server:
        yield server


@contextmanager
def examples_cli_model() -> Iterator[ScriptedModel]:
    """The scripted model that solves the bundled examples, reached at the client's transport by
    `datasolver run` through CliRunner in the block (pass ``--api-url SCRIPTED_BASE_URL``)."""
    with cli_model(handler=solver_handler(examples.demo_answers())) as model:
        yield model


def answers_with(*extra: ScriptedAnswer) -> dict[str, ScriptedAnswer]:
    answers = examples.demo_answers()
    answers.update({a.task_id: a for a in extra})
    return answers


def oracle_answers(task_set: Path) -> dict[str, ScriptedAnswer]:
    """Each task's oracle SQL from a dev task set's oracle.jsonl (../shared/tasks/dev, dev-en)."""
    return {r["task_id"]: ScriptedAnswer(r["task_id"], r["sql"], r["question"]) for r in oracle(task_set)}


def snapshot(folder: Path) -> dict[str, str]:
    """Every file and folder under `folder`: relative path → sha256 (files) or "dir", plus mode."""
    state = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_dir():
            state[rel] = f"dir {path.stat().st_mode:o}"
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[rel] = f"{digest} {path.stat().st_mode:o} {path.stat().st_mtime_ns}"
    return state
