"""How the client meets real servers' behaviours, played by the scripted server: text tool calls,
--tool-mode, servers refusing `tools`, the context window (setting, /v1/models, /props, a 400 in
either wording), every request counted, max_tokens, and a cancelled request closing its connection."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from datasolver.llm import LLMClient, LLMContextLengthError, LLMSettings, ServerFacts, TraceWriter
from datasolver.llm.fake import (
    LLAMA_CPP_WORDING,
    OPENAI_WORDING,
    ScriptedServer,
    delay,
    http_error,
    text,
    tool_call,
    write_calls,
)
from datasolver.llm.response import parse_chat_completion
from datasolver.llm.window import parse_context_limit

TOOLS = [{"type": "function", "function": {
    "name": "explore_data", "description": "Run one read-only SQL query.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]
Q = [{"role": "system", "content": "rules"}, {"role": "user", "content": "question"}]


def settings(server: ScriptedServer, **changes) -> LLMSettings:
    values = {"max_retries": 0, "initial_backoff": 0.0, "max_backoff": 0.0, "retry_after_cap": 0.0}
    values.update(changes)
    return LLMSettings(base_url=server.base_url, api_key=None, model="fake-model", **values)


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("form", ["hermes", "json", "mistral", "functions"])
def test_calls_written_as_text_in_each_form_become_tool_calls(form: str) -> None:
    with ScriptedServer([text(write_calls(tool_call("explore_data", {"query": "SELECT 1"}), form))]) as server:
        async def go():
            async with LLMClient(settings(server)) as client:
                return await client.chat(Q, TOOLS)

        result = run(go())
    [call] = result.tool_calls
    assert (call.name, call.arguments_raw, call.via) == ("explore_data", '{"query": "SELECT 1"}', "text")
    assert result.text_form == form and "explore_data" not in result.content


def test_native_mode_reads_no_text_calls() -> None:
    written = write_calls(tool_call("explore_data", {"query": "SELECT 1"}), "hermes")
    with ScriptedServer([text(written)]) as server:
        async def go():
            async with LLMClient(settings(server, tool_mode="native")) as client:
                return await client.chat(Q, TOOLS)

        result = run(go())
    assert result.tool_calls == [] and result.content == written


def test_text_mode_sends_no_tools_field_and_describes_them_in_the_system_prompt() -> None:
    reply = write_calls(tool_call("explore_data", {"query": "SELECT 1"}), "hermes")
    with ScriptedServer([text(reply), text("done")]) as server:
        async def go():
            async with LLMClient(settings(server, tool_mode="text")) as client:
                first = await client.chat(Q, TOOLS)
                history = [*Q, first.assistant_message(),
                           {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "1 row"}]
                await client.chat(history, TOOLS)

        run(go())
        first, second = server.requests
    assert "tools" not in first and "tools" not in second
    assert first["messages"][0]["content"].startswith("rules") and "## explore_data" in first["messages"][0]["content"]
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"].startswith("<tool_call>")
    assert second["messages"][3]["content"] == "<tool_response>\n1 row\n</tool_response>"


def test_auto_mode_falls_back_to_text_when_the_server_refuses_tools(tmp_path) -> None:
    refusal = http_error(400, body={"error": {"message": "tools param requires --jinja flag", "code": 400}})
    trace = TraceWriter(tmp_path / "trace.jsonl")
    with ScriptedServer([refusal, text("plain"), text("again")]) as server:
        async def go():
            async with LLMClient(settings(server), trace) as client:
                await client.chat(Q, TOOLS)
                await client.chat(Q, TOOLS)  # the server's refusal is remembered
                return client.usage

        usage = run(go())
        bodies = server.requests
    assert "tools" in bodies[0] and "tools" not in bodies[1] and "tools" not in bodies[2]
    assert (usage.requests, usage.failed, usage.retries) == (3, 1, 0)
    assert [e["event"] for e in trace.read()][:3] == ["request", "tools_rejected", "request"]


def test_every_request_is_counted_whatever_its_outcome() -> None:
    with ScriptedServer([http_error(503), text("ok"), http_error(400)]) as server:
        async def go():
            async with LLMClient(settings(server, max_retries=1)) as client:
                await client.chat(Q)
                with pytest.raises(Exception):
                    await client.chat(Q)
                return client.usage

        usage = run(go())
        received = len(server.requests)
    assert usage.as_dict() | {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0} == {
        "requests": 3, "retries": 1, "failed": 2, "cancelled": 0,
        "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert usage.requests == received


def test_a_cancelled_request_is_counted_and_closes_its_connection() -> None:
    with ScriptedServer([delay(3.0, then=text("late"))], one_at_a_time=True) as server:
        async def go():
            async with LLMClient(settings(server)) as client:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.3):
                        await client.chat(Q)
                return client.usage

        usage = run(go())
        waited = time.monotonic() + 2.0
        while server.disconnects == 0 and time.monotonic() < waited:
            time.sleep(0.02)
        assert server.disconnects == 1  # the server saw the client go while it was still "generating"
    assert (usage.requests, usage.cancelled, usage.failed) == (1, 1, 0)


def test_max_tokens_is_sent_and_capped_by_a_known_window() -> None:
    with ScriptedServer(["a", "b"]) as server:
        async def go():
            async with LLMClient(settings(server, max_tokens=3000)) as client:
                await client.chat(Q)
            async with LLMClient(settings(server, max_tokens=3000, context_window=4096)) as client:
                await client.chat(Q)

        run(go())
        first, second = server.requests
    assert first["max_tokens"] == 3000 and second["max_tokens"] == 512


@pytest.mark.parametrize("report", ["models", "props"])
def test_the_window_is_asked_of_the_server(report: str) -> None:
    with ScriptedServer([], context_window=6144, report_window=report) as server:
        async def go():
            async with LLMClient(settings(server)) as client:
                window = await client.learn_context_window()
                again = await client.learn_context_window()  # asked once
                return window, again, client.facts.window_source

        assert run(go()) == (6144, 6144, "server")
        gets = [r.path for r in server.records if r.method == "GET"]
    assert gets == (["/v1/models"] if report == "models" else ["/v1/models", "/props"])


def test_a_stated_window_wins_and_none_is_asked(monkeypatch) -> None:
    monkeypatch.setenv("MODEL_CONTEXT_WINDOW", "8192")
    with ScriptedServer([], context_window=6144, report_window="models") as server:
        stated = LLMSettings.from_env(base_url=server.base_url, model="m")

        async def go():
            async with LLMClient(stated) as client:
                return await client.learn_context_window()

        assert run(go()) == 8192
        assert server.records == []


@pytest.mark.parametrize("wording", [OPENAI_WORDING, LLAMA_CPP_WORDING])
def test_a_context_length_400_in_either_wording_teaches_the_window(wording: str) -> None:
    big = [{"role": "user", "content": "x" * 40_000}]
    with ScriptedServer(["fits"], context_window=2048, wording=wording) as server:
        async def go():
            facts = ServerFacts()
            async with LLMClient(settings(server, max_tokens=512), facts=facts) as client:
                with pytest.raises(LLMContextLengthError) as caught:
                    await client.chat(big)
                result = await client.chat(Q)
                return caught.value, facts, result, client.usage

        error, facts, result, usage = run(go())
        assert server.overflows == 1
    assert error.limit.limit == 2048 and error.limit.requested > 2048 and error.limit.ratio < 1
    assert (facts.context_window, facts.window_source) == (2048, "error")
    assert result.content == "fits" and (usage.requests, usage.failed) == (2, 1)


def test_context_error_wordings_are_parsed() -> None:
    openai = "This model's maximum context length is 8192 tokens. However, you requested 8625 tokens (8000 in the messages, 625 in the completion)."
    assert parse_context_limit(openai) == parse_context_limit(openai, None)
    assert (parse_context_limit(openai).limit, parse_context_limit(openai).requested) == (8192, 8625)
    llama = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it",
                       "type": "exceed_context_size_error", "n_prompt_tokens": 14429, "n_ctx": 8192}}
    assert (parse_context_limit(llama["error"]["message"], llama).limit,
            parse_context_limit(llama["error"]["message"], llama).requested) == (8192, 14429)
    old = "Requested tokens (2138) exceed context window of 2048"
    assert (parse_context_limit(old).limit, parse_context_limit(old).requested) == (2048, 2138)
    assert parse_context_limit("model not found") is None


def test_trace_events_carry_the_attempt_and_the_try(tmp_path) -> None:
    trace = TraceWriter(tmp_path / "trace.jsonl")
    with ScriptedServer([http_error(503), text("ok")]) as server:
        async def go():
            async with LLMClient(settings(server, max_retries=1), trace) as client:
                await client.chat(Q, attempt=3)

        run(go())
    events = [e for e in trace.read() if e["event"] in ("request", "retry", "response")]
    assert [(e["event"], e["attempt"], e["try"]) for e in events] == [
        ("request", 3, 1), ("retry", 3, 1), ("request", 3, 2), ("response", 3, 2)]


def test_the_prefill_speed_and_cached_prompt_tokens_are_learnt_from_llama_cpp_timings(tmp_path) -> None:
    long = [{"role": "system", "content": "rules " * 800}, {"role": "user", "content": "question"}]
    with ScriptedServer(["a", "b"], prefill_rate=25.0) as server:
        trace = TraceWriter(tmp_path / "trace.jsonl")

        async def go():
            async with LLMClient(settings(server), trace) as client:
                first = await client.chat(long)
                second = await client.chat([*long, {"role": "assistant", "content": "a"},
                                            {"role": "user", "content": "more"}])
                return first, second, client.facts.prefill_rate

        first, second, rate = run(go())
    # The first prompt was read in full; the second was served from the cache up to where it grew.
    assert first.cached_tokens == 0 and first.prefill_s == pytest.approx(first.usage.prompt_tokens / 25.0, rel=0.01)
    assert second.cached_tokens > 0.9 * first.usage.prompt_tokens and second.prefilled_tokens < 50
    assert rate == pytest.approx(25.0, rel=0.01)  # learnt from the long read; the short one is too small to count
    responses = [e for e in trace.read() if e["event"] == "response"]
    assert [("cached_tokens" in e, "prefill_s" in e) for e in responses] == [(False, True), (True, True)]


def test_no_prefill_speed_is_learnt_from_a_server_without_timings() -> None:
    with ScriptedServer(["a"]) as server:
        async def go():
            async with LLMClient(settings(server)) as client:
                result = await client.chat([{"role": "user", "content": "x " * 4000}])
                return result, client.facts.prefill_rate

        result, rate = run(go())
    assert (result.cached_tokens, result.prefill_s, rate) == (0, None, None)


def test_openai_cached_tokens_are_read_from_the_usage_details() -> None:
    body = {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 1024}}}
    result = parse_chat_completion(json.dumps(body))
    assert (result.cached_tokens, result.prefilled_tokens, result.prefill_s) == (1024, 176, None)


def test_merged_facts_keep_a_stated_window_take_the_smaller_learnt_one_and_average_prefill() -> None:
    """How a Ray driver takes in what a task learnt (`ServerFacts.merge`)."""
    driver, learnt = ServerFacts(), ServerFacts()
    learnt.learn_window(4096, "server")
    learnt.asked_server, learnt.asked, learnt.tools_rejected, learnt.prefill_rate = True, ["u"], True, 100.0
    driver.merge(learnt)
    assert (driver.context_window, driver.window_source, driver.asked_server) == (4096, "server", True)
    assert driver.tools_rejected and driver.prefill_rate == 100.0
    smaller, larger = ServerFacts(), ServerFacts()
    smaller.learn_window(2048, "error")
    larger.learn_window(8192, "server")
    larger.prefill_rate = 300.0
    driver.merge(smaller)
    driver.merge(larger)  # arriving later does not make a larger window win
    assert (driver.context_window, driver.window_source, driver.prefill_rate) == (2048, "error", 200.0)
    stated = ServerFacts(1024)
    stated.merge(larger)
    assert (stated.context_window, stated.window_source) == (1024, "setting")


def test_the_urls_asked_for_the_window_carry_no_credentials() -> None:
    """Server facts travel between processes (Ray): the URLs they list are redacted."""
    with ScriptedServer([], context_window=6144, report_window="models") as server:
        secret_url = server.base_url.replace("://", "://user:s3cret@")

        async def go():
            async with LLMClient(settings(server).replace(base_url=secret_url)) as client:
                await client.learn_context_window()
                return client.facts

        facts = run(go())
    assert facts.asked and all("s3cret" not in url for url in facts.asked)
