"""The scripted fake server itself: concurrency, routing, strictness, handlers, schema filling."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from datasolver.llm import LLMBadRequestError, LLMClient, LLMSettings, parse_tool_arguments, user_message
from datasolver.llm.fake import ScriptedServer, fill_schema, schema_handler, text, tool_call


def settings(server: ScriptedServer) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, api_key=None, model="m", max_retries=0)


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


def test_keyed_scripts_route_concurrent_conversations() -> None:
    script = {f"task_{i}": [tool_call("f", {"i": i}), text(f"answer {i}")] for i in range(1, 12)}
    with ScriptedServer(script, latency_s=0.05) as server:

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


def test_custom_route_and_missing_key() -> None:
    with ScriptedServer({"a": [text("from a")]}, route=lambda req: req["messages"][-1]["content"]) as s:

        async def go() -> None:
            async with LLMClient(settings(s)) as client:
                assert (await client.chat([user_message("a")])).content == "from a"
                with pytest.raises(LLMBadRequestError, match="no script for key 'b'"):
                    await client.chat([user_message("b")])

        asyncio.run(go())
        assert s.errors == ["ScriptedServer: no script for key 'b'"]


def test_exhausted_script_and_failing_handler_are_reported_not_retried() -> None:
    def handler(req: dict[str, Any]) -> None:
        if req["messages"][-1]["content"] == "boom":
            raise RuntimeError("bad test handler")
        return None  # fall back to the script

    with ScriptedServer([text("one")], handler=handler) as s:

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
def test_strict_mode_rejects_what_strict_servers_reject(messages: list[Any], problem: str) -> None:
    with ScriptedServer([text("unused")]) as s:
        response = httpx.post(f"{s.base_url}/chat/completions", json={"model": "m", "messages": messages})
        assert response.status_code == 400
        assert problem in response.json()["error"]["message"]
        assert s.requests[0]["messages"] == messages  # recorded even when rejected
        assert s.remaining() == 1


def test_models_endpoint_and_unknown_route() -> None:
    with ScriptedServer(model="fake-qwen") as s:
        assert httpx.get(f"{s.base_url}/models").json()["data"][0]["id"] == "fake-qwen"
        assert httpx.post(f"{s.base_url}/embeddings", json={}).status_code == 404
        assert s.requests == []  # only chat completions count as requests


def test_usage_numbers_are_plausible() -> None:
    with ScriptedServer([text("x" * 400)]) as s:
        body = httpx.post(
            f"{s.base_url}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "y" * 4000}]},
        ).json()
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


def test_schema_handler_calls_every_tool_then_answers() -> None:
    tools = [
        {"type": "function", "function": {"name": "query", "parameters": QueryArgs.model_json_schema()}},
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
    ]
    with ScriptedServer(handler=schema_handler("all done")) as s:

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
