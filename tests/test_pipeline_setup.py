"""One task setup from a run's settings, for the local and the Ray executor alike."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from datasolver.agent import Limits
from datasolver.llm import LLMSettings, ServerFacts
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.task import TaskSetup
from datasolver.pipeline.votes import VotePolicy


def _config(tmp_path: Path, **changes) -> RunConfig:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key="k", context_window=8192)
    return RunConfig(input_dir=tmp_path / "in", output_dir=tmp_path / "out", logs_dir=tmp_path / "logs",
                     settings=settings, limits=Limits(max_attempts=2), doc_llm=False,
                     votes=VotePolicy(votes=3), **changes)


def test_a_setup_carries_every_run_setting_the_task_needs(tmp_path: Path) -> None:
    config = _config(tmp_path)
    setup = TaskSetup.from_config(config, scratch_root=tmp_path / "scratch", temporary_scratch=True)
    assert (setup.output_dir, setup.logs_dir, setup.settings) == (config.output_dir, config.logs_dir, config.settings)
    assert (setup.limits, setup.doc_llm, setup.votes) == (config.limits, False, config.votes)
    assert setup.scratch_root == tmp_path / "scratch" and setup.keep_scratch is False
    # Without facts shared by the executor, the configured window still starts the task's own.
    assert setup.facts is not None and setup.facts.context_window == 8192


def test_scratch_is_kept_when_asked_or_when_it_is_the_users_folder(tmp_path: Path) -> None:
    keep = TaskSetup.from_config(_config(tmp_path, keep_scratch=True), scratch_root=tmp_path, temporary_scratch=True)
    given = TaskSetup.from_config(_config(tmp_path), scratch_root=tmp_path, temporary_scratch=False)
    assert keep.keep_scratch and given.keep_scratch


def test_shared_facts_are_passed_on_untouched(tmp_path: Path) -> None:
    facts = ServerFacts(4096)
    setup = TaskSetup.from_config(_config(tmp_path), scratch_root=tmp_path, temporary_scratch=True, facts=facts)
    assert setup.facts is facts
    fields = {f.name for f in dataclasses.fields(TaskSetup)}
    assert fields == {"scratch_root", "output_dir", "logs_dir", "settings", "limits", "doc_llm", "solver",
                      "keep_scratch", "request_gate", "facts", "votes"}, "a new field needs a line in from_config"
