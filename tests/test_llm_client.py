"""LLMClient against the scripted model, over real HTTP and at the client's transport (each test on
both faces, so the transport is shown to meet the client as the server does): replies, tools,
retries, errors, timeouts, thinking, usage."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

import datasolver.llm.client as client_module
from datasolver.llm import (
    LLMClient,
    LLMConfigError,
    LLMContextLengthError,
    LLMSettings,
    TraceWriter,
    Usage,
    parse_tool_arguments,
    tool_message,
    user_message,
)
from datasolver.llm.client import chat_sync
from datasolver.llm.errors import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
)
from datasolver.llm.fake import (
    ScriptedModel,
    ScriptedServer,
    delay,
    garbage,
    http_error,
    text,
    tool_call,
    tool_calls,
)

T = TypeVar("T")
KEY = "sk-test-0123456789abcdef"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "explore_data",
            "description": "Run a read-only SQL query.",
            "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]},
        },
    }
]
Q = [user_message("How many rows?")]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record every backoff the client asks for, and do not actually wait."""
    recorded: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(client_module, "retry_pause", fake_sleep)
    return recorded


@pytest.fixture(params=["http", "transport"])
def server_factory(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Makes the scripted model: a started ScriptedServer, or a ScriptedModel at the transport."""
    servers: list[ScriptedServer] = []

    def make(*args: Any, **kwargs: Any) -> ScriptedModel:
        if request.param == "transport":
            return ScriptedModel(*args, **kwargs)
        server = ScriptedServer(*args, **kwargs).start()
        servers.append(server)
        return server

    yield make
    for s in servers:
        s.close()


def settings_for(server: ScriptedModel, **kw: Any) -> LLMSettings:
    return LLMSettings(**server.connection(), api_key=KEY, model="fake-qwen", **kw)


async def chat_once(settings: LLMSettings, messages: list[dict[str, Any]], **kw: Any) -> tuple[Any, Usage]:
    async with LLMClient(settings) as client:
        result = await client.chat(messages, **kw)
        return result, client.usage


def test_plain_text_reply(server_factory: Any) -> None:
    server = server_factory([text("42 rows")])
    result, usage = run(chat_once(settings_for(server), Q))
    assert result.content == "42 rows"
    assert result.tool_calls == []
    assert result.finish_reason == "stop"
    assert result.assistant_message() == {"role": "assistant", "content": "42 rows"}
    assert result.latency_s > 0 and result.retries_taken == 0
    sent = server.requests[0]
    assert sent["model"] == "fake-qwen"
    assert sent["temperature"] == 0.0
    assert sent["messages"] == Q
    assert "chat_template_kwargs" not in sent  # no thinking switch unless asked
    assert server.records[0].headers["authorization"] == f"Bearer {KEY}"
    assert server.errors == []


def test_tool_call_round_trip(server_factory: Any) -> None:
    server = server_factory([tool_call("explore_data", {"sql": "SELECT count(*) FROM t"}), text("3")])

    async def conversation() -> list[dict[str, Any]]:
        history = list(Q)
        async with LLMClient(settings_for(server)) as client:
            first = await client.chat(history, TOOLS)
            assert first.finish_reason == "tool_calls"
            (call,) = first.tool_calls
            assert call.name == "explore_data"
            assert json.loads(call.arguments_raw) == {"sql": "SELECT count(*) FROM t"}
            history.append(first.assistant_message())
            history.append(tool_message(call.id, "count = 3"))
            second = await client.chat(history, TOOLS)
            assert second.content == "3"
            return history

    history = run(conversation())
    first_body, second_body = server.requests
    assert first_body["tools"] == TOOLS
    resent = second_body["messages"][1]
    # The server sent content null next to tool_calls; we must send "" back (llama.cpp rejects null).
    assert resent["content"] == "" and resent["role"] == "assistant"
    assert resent["tool_calls"][0]["function"]["name"] == "explore_data"
    assert second_body["messages"][2] == {"role": "tool", "tool_call_id": resent["tool_calls"][0]["id"],
                                         "content": "count = 3"}
    assert second_body["messages"] == history
    assert server.errors == []  # strict checks passed


def test_several_tool_calls_with_malformed_arguments_are_kept_raw(server_factory: Any) -> None:
    server = server_factory([tool_calls([("explore_data", "{'sql': 'SELECT 1',}"), ("explore_data", "oops")])])
    result, _ = run(chat_once(settings_for(server), Q, tools=TOOLS))
    raws = [c.arguments_raw for c in result.tool_calls]
    assert raws == ["{'sql': 'SELECT 1',}", "oops"]
    assert len({c.id for c in result.tool_calls}) == 2
    class Args(BaseModel):
        sql: str

    assert parse_tool_arguments(raws[0], Args).value == Args(sql="SELECT 1")
    assert "not valid JSON" in (parse_tool_arguments(raws[1], Args).error or "")


def test_429_with_retry_after_then_success(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(429, retry_after=3), text("ok")])
    result, usage = run(chat_once(settings_for(server), Q))
    assert result.content == "ok"
    assert result.retries_taken == 1
    assert sleeps == [3.0]  # Retry-After honoured, not the computed backoff
    # Every HTTP request counts: the refused one and its retry.
    assert usage.as_dict()["retries"] == 1 and usage.requests == 2 and usage.failed == 1
    assert len(server.requests) == 2


def test_500_then_success_uses_backoff(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(500), http_error(503), text("ok")])
    result, _ = run(chat_once(settings_for(server, initial_backoff=0.2), Q))
    assert result.content == "ok" and result.retries_taken == 2
    assert 0.15 <= sleeps[0] <= 0.2 and 0.3 <= sleeps[1] <= 0.4  # 0.2·2^n, minus up to 25 % jitter


def test_retries_exhausted_raise_the_status_error(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(429)] * 3)
    with pytest.raises(LLMRateLimitError) as info:
        run(chat_once(settings_for(server, max_retries=2), Q))
    assert info.value.status_code == 429 and info.value.retries_taken == 2
    assert len(sleeps) == 2 and server.remaining() == 0


def test_server_error_class(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(502, body={"error": {"message": "upstream died"}})])
    with pytest.raises(LLMServerError, match="HTTP 502 .*upstream died"):
        run(chat_once(settings_for(server, max_retries=0), Q))


def test_bad_request_is_not_retried(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(400), text("never")])
    with pytest.raises(LLMBadRequestError):
        run(chat_once(settings_for(server), Q))
    assert sleeps == [] and server.remaining() == 1


def test_context_length_error_is_recognised(server_factory: Any) -> None:
    body = {"error": {"message": "This model's maximum context length is 32768 tokens."}}
    server = server_factory([http_error(400, body=body)])
    with pytest.raises(LLMContextLengthError):
        run(chat_once(settings_for(server), Q))


def test_read_timeout_then_success(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([delay(2.0), text("fast now")])
    result, _ = run(chat_once(settings_for(server, read_timeout=0.3), Q))
    # Only a read timeout can have skipped the delayed first answer.
    assert result.content == "fast now" and result.retries_taken == 1


def test_read_timeout_exhausted(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([delay(2.0), delay(2.0)])
    with pytest.raises(LLMTimeoutError, match="within 0.2s") as info:
        run(chat_once(settings_for(server, read_timeout=0.2, max_retries=1), Q))
    assert info.value.retries_taken == 1


def test_connection_refused_is_a_connection_error(sleeps: list[float]) -> None:
    with ScriptedServer() as server:
        url = server.base_url
    settings = LLMSettings(base_url=url, api_key=None, model="m", max_retries=1)
    with pytest.raises(LLMConnectionError) as info:
        run(chat_once(settings, Q))
    assert not isinstance(info.value, LLMTimeoutError)
    assert len(sleeps) == 1


def test_garbage_body_then_success(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([garbage(), text("ok")])
    result, _ = run(chat_once(settings_for(server), Q))
    assert result.content == "ok" and result.retries_taken == 1


def test_garbage_body_exhausted(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([garbage("<html>nope</html>")])
    with pytest.raises(LLMResponseError, match="not JSON.*nope"):
        run(chat_once(settings_for(server, max_retries=0), Q))


def test_think_blocks_and_reasoning_content_are_split(server_factory: Any) -> None:
    server = server_factory([text("The answer is 7.", think="let me count", reasoning="separate channel")])
    result, _ = run(chat_once(settings_for(server), Q))
    assert result.content == "The answer is 7."
    assert result.reasoning == "separate channel\n\nlet me count"
    assert result.assistant_message() == {"role": "assistant", "content": "The answer is 7."}
    assert "reasoning_content" in result.raw["choices"][0]["message"]  # kept in the response object


@pytest.mark.parametrize(
    ("setting", "per_call", "expected"),
    [(None, False, False), (None, True, True), (True, None, True), (True, False, False), (None, None, None)],
)
def test_thinking_switch_in_request_body(
    server_factory: Any, setting: bool | None, per_call: bool | None, expected: bool | None
) -> None:
    server = server_factory([text("ok")])
    run(chat_once(settings_for(server, enable_thinking=setting), Q, enable_thinking=per_call))
    body = server.requests[0]
    if expected is None:
        assert "chat_template_kwargs" not in body
    else:
        assert body["chat_template_kwargs"] == {"enable_thinking": expected}


def test_per_call_overrides_and_extra_body_merge(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(500), text("ok")])

    async def go() -> None:
        async with LLMClient(settings_for(server)) as client:
            with pytest.raises(LLMServerError):
                await client.chat(
                    Q, max_retries=0, temperature=0.7, max_tokens=50, enable_thinking=False,
                    extra_body={"top_k": 20, "chat_template_kwargs": {"other": 1}},
                    extra_headers={"X-Route": "pool-b"}, extra_query={"tenant": "t1"},
                )
            with pytest.raises(LLMConfigError, match="with_options"):
                await client.chat(Q, base_url="http://elsewhere/v1")
            assert client.settings.max_retries > 0  # the override did not stick

    run(go())
    body = server.requests[0]
    assert body["temperature"] == 0.7 and body["max_tokens"] == 50 and body["top_k"] == 20
    assert body["chat_template_kwargs"] == {"other": 1, "enable_thinking": False}
    assert not {"extra_body", "extra_headers", "extra_query"} & set(body)  # options, not JSON fields
    received = [r for r in server.records if r.path.startswith("/v1/chat/completions")][0]
    assert {k.lower(): v for k, v in received.headers.items()}["x-route"] == "pool-b" and received.path.endswith("?tenant=t1")


def test_with_options_shares_usage_and_overrides_retries(server_factory: Any, sleeps: list[float]) -> None:
    server = server_factory([http_error(503), text("ok")])

    async def go() -> Usage:
        async with LLMClient(settings_for(server, max_retries=0)) as client:
            patient = client.with_options(max_retries=3)
            assert patient.usage is client.usage
            result = await patient.chat(Q)
            assert result.content == "ok"
            return client.usage

    usage = run(go())
    assert usage.requests == 2 and usage.retries == 1 and usage.failed == 1


def test_usage_accumulates_per_task_and_merges_into_run(server_factory: Any) -> None:
    server = server_factory([text("a"), text("bb"), text("c")])

    async def go() -> tuple[Usage, list[Any]]:
        async with LLMClient(settings_for(server)) as client:
            results = [await client.chat(Q) for _ in range(3)]
            return client.usage, results

    usage, results = run(go())
    assert usage.requests == 3
    assert usage.prompt_tokens == sum(r.usage.prompt_tokens for r in results) > 0
    assert usage.completion_tokens == sum(r.usage.completion_tokens for r in results) > 0
    run_total = Usage().merge(usage).merge(usage)
    assert run_total.as_dict() == {
        "requests": 6,
        "prompt_tokens": 2 * usage.prompt_tokens,
        "completion_tokens": 2 * usage.completion_tokens,
        "total_tokens": 2 * usage.total_tokens,
        "retries": 0,
        "failed": 0,
        "cancelled": 0,
    }


def test_usage_since_a_snapshot_is_one_tasks_or_one_questions_share() -> None:
    """The one way the agent (per task) and the analyst (per question) count their own share of a
    client's usage that earlier stages also counted."""
    usage = Usage()
    usage.add(100, 10)
    before = usage.as_dict()
    usage.add(40, 5, retries=1)
    usage.add(0, 0, failed=1)
    assert usage.since(before) == {"requests": 2, "prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45,
                                   "retries": 1, "failed": 1, "cancelled": 0}
    assert usage.since({}) == usage.as_dict()


def test_empty_messages_fail_before_io() -> None:
    client = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=None, model="m"))
    with pytest.raises(ValueError, match="messages"):
        run(client.chat([]))


def test_chat_sync_helper(server_factory: Any) -> None:
    server = server_factory([text("sync ok")])
    assert chat_sync(settings_for(server), Q).content == "sync ok"


def test_cancellation_is_traced_and_propagates(server_factory: Any, tmp_path: Any) -> None:
    server = server_factory([delay(5.0)])
    trace = TraceWriter(tmp_path, "t")

    async def go() -> None:
        async with LLMClient(settings_for(server), trace=trace) as client:
            await asyncio.wait_for(client.chat(Q), timeout=0.3)

    with pytest.raises(asyncio.TimeoutError):
        run(go())
    assert trace.read()[-1]["error_type"] == "CancelledError"


def test_clients_share_one_tls_context(monkeypatch: Any) -> None:
    # Loading the CA bundle cost ~25 ms of CPU for every client (one per task) before. Two clients
    # load it once between them, or not at all when an earlier client of this process did.
    import ssl

    loads = []
    real = ssl.SSLContext.load_verify_locations
    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", lambda self, *a, **k: loads.append(1) or real(self, *a, **k))
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=KEY, model="m")

    async def two_clients() -> None:
        async with LLMClient(settings), LLMClient(settings):
            pass

    run(two_clients())
    assert len(loads) <= 1


def test_a_known_prefill_speed_lengthens_the_read_timeout_for_a_long_prompt() -> None:
    """A CPU server that reads 20 tokens a second needs minutes for a long prompt: the client waits
    what reading it takes (characters bounded to tokens from above, twice over, plus the reply's
    room), never less than read_timeout."""
    client = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=None, model="m", read_timeout=300))
    short = {"messages": [{"role": "user", "content": "hi"}]}
    long = {"messages": [{"role": "user", "content": "x" * 12_000}]}
    assert client.read_timeout_for(long) == 300  # speed unknown: the setting
    client.facts.learn_prefill(2000, 100.0)  # 20 tokens a second
    assert client.read_timeout_for(short) == 300
    assert client.read_timeout_for(long) > 2 * 10_000 / 20
