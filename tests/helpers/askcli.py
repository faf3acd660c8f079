"""`datasolver ask` as a person runs it against the scripted model: the environment points at a
ScriptedServer (MODEL_API_URL, MODEL_NAME), closed when the test ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner, Result

from datasolver.cli import cli
from datasolver.llm.fake import ScriptedServer


def scripted_model_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list], ScriptedServer]]:
    """For a fixture (`yield from`): a function that starts a scripted server and points the environment at it."""
    servers: list[ScriptedServer] = []

    def serve(script) -> ScriptedServer:
        server = ScriptedServer(script).start()
        servers.append(server)
        monkeypatch.setenv("MODEL_API_URL", server.base_url)
        monkeypatch.setenv("MODEL_NAME", "fake")
        return server

    yield serve
    for server in servers:
        server.close()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)
