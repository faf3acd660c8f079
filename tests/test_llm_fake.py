"""The scripted model itself, on both faces (a real HTTP server, and a transport under the client):
concurrency, routing, strictness, handlers, usage, schema filling; the transport opens no socket."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from datasolver.llm import LLMClient, LLMSettings, parse_tool_arguments, user_message
from datasolver.llm.errors import LLMBadRequestError
from datasolver.llm.fake import (SCRIPTED_BASE_URL, ScriptedModel, ScriptedServer, delay, fill_schema, http_error,
                                 schema_handler, text, tool_call)

TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
FACES = pytest.mark.parametrize("face", [ScriptedServer, ScriptedModel], ids=["http", "transport"])


def settings(server: ScriptedModel) -> LLMSettings:
    return LLMSettings(**server.connection(), api_key=None, model="m", max_retries=0)


def send(fake: ScriptedModel, method: str, path: str, body: Any = None) -> httpx.Response:
    """One raw request to the fake (no LLMClient in between), over HTTP or through its transport."""
    if isinstance(fake, ScriptedServer):
        return httpx.request(method, f"{fake.base_url}{path}", json=body)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=fake.transport(), base_url=SCRIPTED_BASE_URL) as client:
            return await client.request(method, f"{SCRIPTED_BASE_URL}{path}", json=body)

    return asyncio.run(go())


def test_concurrent_requests_are_served_in_parallel() -> None:
    # No clock: each request waits until all eight are inside the handler at once, which a
    # server that serialises requests never reaches (the barrier then breaks after 10 s).
    barrier = threading.Barrier(8, timeout=10)

    def handler(req):
        barrier.wait()
        return text("ok")

    with ScriptedServer(handler=handler) as server:

        async def go() -> list[str]:
            async with LLMClient(settings(server)) as client:
                results = await asyncio.gather(*(client.chat([user_message(f"q{i}")]) for i in range(8)))
                return [r.content for r in results]

        contents = asyncio.run(go())
    assert contents == ["ok"] * 8 and not barrier.broken


def test_at_the_transport_the_real_client_runs_with_no_socket_and_no_thread(monkeypatch) -> None:
    """The SDK, the client's retry of a 429 and its parsing run above the transport; nothing connects."""
    import socket

    def refuse(self, address):
        raise AssertionError(f"a socket was opened to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    model = ScriptedModel([http_error(429, retry_after=0), tool_call("f", {"x": 1}), text("done")])
    threads = set(threading.enumerate())

    async def go() -> list[Any]:
        async with LLMClient(settings(model).replace(api_key="sk-t", max_retries=1)) as client:
            first = await client.chat([user_message("q")], [TOOL])
            history = [user_message("q"), first.assistant_message(),
                       {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "1"}]
            return [first, await client.chat(history, [TOOL]), client.usage]

    first, second, usage = asyncio.run(go())
    assert (first.retries_taken, json.loads(first.tool_calls[0].arguments_raw), second.content) == (1, {"x": 1}, "done")
    assert usage.requests == 3 and usage.retries == 1
    # no thread started (compared by identity: a thread of an earlier test may end meanwhile; counting
    # them once failed that way in a full run)
    assert set(threading.enumerate()) - threads == set()
    assert [(r.method, r.path) for r in model.records] == [("POST", "/v1/chat/completions")] * 3
    assert model.records[0].headers["authorization"] == "Bearer sk-t" and model.errors == []


def test_at_the_transport_a_late_answer_meets_the_read_timeout_and_the_client_counts_as_gone() -> None:
    model = ScriptedModel([delay(5.0, "late"), text("on time")])

    async def go() -> Any:
        async with LLMClient(settings(model).replace(read_timeout=0.1, max_retries=1, initial_backoff=0.0)) as client:
            return await client.chat([user_message("q")])

    reply = asyncio.run(go())
    assert (reply.content, reply.retries_taken, model.disconnects) == ("on time", 1, 1)


@FACES
def test_keyed_scripts_route_concurrent_conversations(face: type[ScriptedModel]) -> None:
    script = {f"task_{i}": [tool_call("f", {"i": i}), text(f"answer {i}")] for i in range(1, 12)}
    with face(script, latency_s=0.05) as server:

        async def conversation(client: LLMClient, i: int) -> str:
            history = [user_message(f"Solve task_{i} please")]
            first = await client.chat(history)
            assert json.loads(first.tool_calls[0].arguments_raw) == {"i": i}
            history += [first.assistant_message(),
                        {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "x"}]
            return (await client.chat(history)).content

        async def go() -> list[str]:
            async with LLMClient(settings(server)) as client:
                return await asyncio.gather(*(conversation(client, i) for i in range(1, 12)))

        answers = asyncio.run(go())
        assert answers == [f"answer {i}" for i in range(1, 12)]  # task_1 never steals task_11's turns
        assert server.errors == []
        assert {r.key for r in server.records} == set(script)


@FACES
def test_custom_route_and_missing_key(face: type[ScriptedModel]) -> None:
    with face({"a": [text("from a")]}, route=lambda req: req["messages"][-1]["content"]) as s:

        async def go() -> None:
            async with LLMClient(settings(s)) as client:
                assert (await client.chat([user_message("a")])).content == "from a"
                with pytest.raises(LLMBadRequestError, match="no script for key 'b'"):
                    await client.chat([user_message("b")])

        asyncio.run(go())
        assert s.errors == ["ScriptedServer: no script for key 'b'"]


@FACES
def test_exhausted_script_and_failing_handler_are_reported_not_retried(face: type[ScriptedModel]) -> None:
    def handler(req: dict[str, Any]) -> None:
        if req["messages"][-1]["content"] == "boom":
            raise RuntimeError("bad test handler")
        return None  # fall back to the script

    with face([text("one")], handler=handler) as s:

        async def go() -> None:
            async with LLMClient(settings(s).replace(max_retries=3)) as client:
                assert (await client.chat([user_message("x")])).content == "one"
                with pytest.raises(LLMBadRequestError, match="script exhausted"):
                    await client.chat([user_message("x")])
                with pytest.raises(LLMBadRequestError, match="handler raised RuntimeError"):
                    await client.chat([user_message("boom")])

        asyncio.run(go())
        assert len(s.requests) == 3  # 400s were not retried


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "user", "content": "q"},
          {"role": "assistant", "content": None,
           "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "r"}],
         "assistant content must not be null"),
        ([{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "zz", "content": "r"}],
         "unknown tool_call_id 'zz'"),
        ([], "non-empty list"),
    ],
)
@FACES
def test_strict_mode_rejects_what_strict_servers_reject(messages: list[Any], problem: str,
                                                          face: type[ScriptedModel]) -> None:
    with face([text("unused")]) as s:
        response = send(s, "POST", "/chat/completions", {"model": "m", "messages": messages})
        assert response.status_code == 400
        assert problem in response.json()["error"]["message"]
        assert s.requests[0]["messages"] == messages  # recorded even when rejected
        assert s.remaining() == 1


@FACES
def test_models_endpoint_and_unknown_route(face: type[ScriptedModel]) -> None:
    with face(model="fake-qwen") as s:
        assert send(s, "GET", "/models").json()["data"][0]["id"] == "fake-qwen"
        assert send(s, "POST", "/embeddings", {}).status_code == 404
        assert s.requests == []  # only chat completions count as requests


@FACES
def test_usage_numbers_are_plausible(face: type[ScriptedModel]) -> None:
    with face([text("x" * 400)]) as s:
        body = send(s, "POST", "/chat/completions",
                    {"model": "m", "messages": [{"role": "user", "content": "y" * 4000}]}).json()
    usage = body["usage"]
    assert 1000 <= usage["prompt_tokens"] <= 1100
    assert 100 <= usage["completion_tokens"] <= 130
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


class Filter(BaseModel):
    column: str
    op: str = "="


class QueryArgs(BaseModel):
    sql: str
    limit: int
    mode: str | None = None
    filters: list[Filter] = []
    kind: Any = None


def test_fill_schema_produces_valid_arguments() -> None:
    schema = {**QueryArgs.model_json_schema(), "required": ["sql", "limit", "filters"]}
    schema["properties"]["filters"]["minItems"] = 1
    del schema["properties"]["filters"]["default"]  # a default would be used as is
    value = fill_schema(schema)
    assert QueryArgs.model_validate(value).filters == [Filter(column="a")]


@FACES
def test_schema_handler_calls_every_tool_then_answers(face: type[ScriptedModel]) -> None:
    tools = [
        {"type": "function", "function": {"name": "query", "parameters": QueryArgs.model_json_schema()}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
    ]
    with face(handler=schema_handler("all done")) as s:

        async def go() -> None:
            async with LLMClient(settings(s)) as client:
                history: list[dict[str, Any]] = [user_message("go")]
                first = await client.chat(history, tools)
                assert [c.name for c in first.tool_calls] == ["query", "ping"]
                assert parse_tool_arguments(first.tool_calls[0].arguments_raw, QueryArgs).ok
                history.append(first.assistant_message())
                history += [{"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in first.tool_calls]
                assert (await client.chat(history, tools)).content == "all done"

        asyncio.run(go())
