"""LLMClient's request gate: entered around every HTTP request (retries too), kept by with_options. The
scripted model answers at the client's transport: the gate is the client's, above the transport."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

import pytest

from datasolver.llm import LLMClient, LLMSettings
from datasolver.llm.fake import ScriptedModel, http_error, text

pytestmark = pytest.mark.fast


def test_every_request_and_retry_passes_the_gate() -> None:
    entered: list[str] = []
    inside = 0
    most = 0

    @asynccontextmanager
    async def gate():
        nonlocal inside, most
        entered.append("in")
        inside += 1
        most = max(most, inside)
        try:
            yield
        finally:
            inside -= 1

    async def go(model: ScriptedModel) -> list[str]:
        settings = LLMSettings(**model.connection(), api_key="k", model="fake", max_retries=1,
                               initial_backoff=0.01, max_backoff=0.01)
        async with LLMClient(settings, request_gate=gate) as client:
            first = await client.chat([{"role": "user", "content": "a"}])  # 503, then the answer
            derived = client.with_options(temperature=0.3)
            second = await derived.chat([{"role": "user", "content": "b"}])
            return [first.content, second.content]

    with ScriptedModel(script=[http_error(503), text("one"), text("two")]) as model:
        answers = asyncio.run(go(model))
        assert len(model.requests) == 3
    assert answers == ["one", "two"]
    assert len(entered) == 3 and inside == 0 and most == 1
