"""`datasolver ask` as a person runs it against the scripted model: the environment names the model
(MODEL_API_URL, MODEL_NAME) and the command's settings reach it at the client's transport
(`ScriptedModel`: no server, socket or thread). A test whose subject is HTTP (a real endpoint, a
dead port) runs the command in a subprocess against a real URL instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from datasolver.cli import cli
from datasolver.llm import LLMSettings
from datasolver.llm.fake import SCRIPTED_BASE_URL, ScriptedModel


def scripted_model_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list], ScriptedModel]]:
    """For a fixture (`yield from`): a function that loads a script into a scripted model and points
    the environment, and the settings the command reads from it, at that model (the latest wins)."""
    from_env = LLMSettings.from_env.__func__  # type: ignore[attr-defined]

    def serve(script) -> ScriptedModel:
        model = ScriptedModel(script)

        def at_the_transport(cls: type[LLMSettings], **overrides: Any) -> LLMSettings:
            return from_env(cls, **overrides, transport=model.transport)

        monkeypatch.setenv("MODEL_API_URL", SCRIPTED_BASE_URL)
        monkeypatch.setenv("MODEL_NAME", "fake")
        monkeypatch.setattr(LLMSettings, "from_env", classmethod(at_the_transport))
        return model

    yield serve


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)
