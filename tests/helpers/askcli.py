"""`datasolver ask` (and `run`) through CliRunner as a person runs them against the scripted model: the
environment or the flags name the model (MODEL_API_URL / --api-url, MODEL_NAME / --model) and the
settings the command reads reach it at the client's transport (`ScriptedModel`: no server, socket or
thread). A test whose subject is HTTP (a real endpoint, a dead port, headers) keeps a
`ScriptedServer` or a subprocess against a real URL instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from click.testing import CliRunner, Result

from datasolver.cli import cli
from datasolver.llm import LLMSettings
from datasolver.llm.fake import SCRIPTED_BASE_URL, ScriptedModel

_FROM_ENV = LLMSettings.__dict__["from_env"].__func__  # unpatched, whichever model a test loads last


def settings_reach(monkeypatch: pytest.MonkeyPatch, model: ScriptedModel) -> None:
    """The settings a command reads (`LLMSettings.from_env`, under its flags) reach ``model`` at the
    client's transport, whatever URL they name (`SCRIPTED_BASE_URL` reads best)."""

    def at_the_transport(cls: type[LLMSettings], **overrides: Any) -> LLMSettings:
        return _FROM_ENV(cls, **overrides, transport=model.transport)

    monkeypatch.setattr(LLMSettings, "from_env", classmethod(at_the_transport))


@contextmanager
def cli_model(script: Any = None, handler: Any = None, **options: Any) -> Iterator[ScriptedModel]:
    """A scripted model that the commands run through CliRunner in the block reach (pass
    ``--api-url SCRIPTED_BASE_URL``)."""
    with pytest.MonkeyPatch.context() as monkeypatch, ScriptedModel(script, handler, **options) as model:
        settings_reach(monkeypatch, model)
        yield model


def scripted_model_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list], ScriptedModel]]:
    """For a fixture (`yield from`): a function that loads a script into a scripted model and points
    the environment, and the settings the command reads from it, at that model (the latest wins)."""

    def serve(script) -> ScriptedModel:
        model = ScriptedModel(script)
        monkeypatch.setenv("MODEL_API_URL", SCRIPTED_BASE_URL)
        monkeypatch.setenv("MODEL_NAME", "fake")
        settings_reach(monkeypatch, model)
        return model

    yield serve


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)
