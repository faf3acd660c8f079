"""TraceWriter: JSON lines per event, keys scrubbed, incremental messages, safe concurrent appends (the
client's requests answered by the scripted model at its transport)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import datasolver.llm.client as client_module
from datasolver.llm import LLMClient, LLMSettings, TraceWriter, Usage, user_message
from datasolver.llm.errors import LLMServerError
from datasolver.llm.fake import ScriptedModel, http_error, text, tool_call

pytestmark = pytest.mark.fast

KEY = "sk-live-ABCDEFGH12345678"


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    async def fake_sleep(seconds: float) -> None:
        return None

    monkeypatch.setattr(client_module, "retry_pause", fake_sleep)


def test_path_layout(tmp_path: Path) -> None:
    assert TraceWriter(tmp_path, "task_7").path == tmp_path / "task_7" / "trace.jsonl"
    assert TraceWriter(tmp_path / "x.jsonl").path == tmp_path / "x.jsonl"
    assert TraceWriter(tmp_path / "logs").path == tmp_path / "logs" / "trace.jsonl"


def test_event_fields_and_scrubbing(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path, "t1", secrets=[KEY, "x", None])
    trace.event(
        "custom",
        note=f"key is {KEY} here",
        headers={"Authorization": "Bearer abc.def", "Content-Type": "json"},
        nested=[{"api_key": "whatever"}, "curl -H 'Authorization: Bearer tok123'"],
        shouted="BEARER tok456 and bEaReR tok789", url="see https://ann:pw@host.example/v1 and http://h/v1",
        usage=Usage(requests=1),
        short="x marks",  # too short a "secret" to scrub by substring
    )
    (line,) = (tmp_path / "t1" / "trace.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["event"] == "custom" and record["task_id"] == "t1" and record["seq"] == 1
    assert record["ts"].endswith("+00:00") and "T" in record["ts"]
    assert record["note"] == "key is *** here"
    assert record["headers"] == {"Authorization": "***", "Content-Type": "json"}
    assert record["nested"] == [{"api_key": "***"}, "curl -H 'Authorization: Bearer ***'"]
    assert record["shouted"] == "BEARER *** and bEaReR ***"
    assert record["url"] == "see https://***@host.example/v1 and http://h/v1"
    assert record["usage"]["requests"] == 1
    assert record["short"] == "x marks"
    assert KEY not in line and "tok123" not in line


def test_threads_append_whole_lines(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path, "t")
    payload = "x" * 5000

    def write(n: int) -> None:
        for i in range(50):
            trace.event("tick", thread=n, i=i, payload=payload)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = trace.read()
    assert len(records) == 400
    assert sorted(r["seq"] for r in records) == list(range(1, 401))


def test_client_traces_requests_retries_responses_and_errors(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path, "task_1")
    tools = [{"type": "function", "function": {"name": "explore_data", "parameters": {"type": "object"}}}]
    script = [http_error(429, retry_after=1), tool_call("explore_data", {"sql": "SELECT 1"}), text("done"),
              http_error(500)]
    with ScriptedModel(script) as model:
        settings = LLMSettings(**model.connection(), api_key=KEY, model="m", max_retries=2)

        async def go() -> None:
            async with LLMClient(settings, trace=trace) as client:
                history: list[dict[str, Any]] = [user_message("q")]
                first = await client.chat(history, tools, enable_thinking=False)
                history += [first.assistant_message(),
                            {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": "1"}]
                trace.tool_result(first.tool_calls[0].id, "explore_data", "1", latency_s=0.01)
                await client.chat(history, tools)
                with pytest.raises(LLMServerError):
                    await client.chat(history, tools, max_retries=0)

        asyncio.run(go())

    raw = trace.path.read_text(encoding="utf-8")
    assert KEY not in raw
    events = [json.loads(line) for line in raw.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds == ["request", "retry", "request", "response", "tool_result", "request", "response",
                     "request", "error"]
    req1, retry, req1b, resp1, _, req2, resp2, req3, error = events
    assert req1["request_id"] == 1 and req1["try"] == 1 and "attempt" not in req1 and req1["messages"] == [user_message("q")]
    assert req1["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}}  # thinking switch traced
    assert req1["tool_schemas"] == tools and req1["tools"] == ["explore_data"]
    assert retry["reason"] == "HTTP 429" and retry["delay_s"] == 1.0 and retry["status"] == 429
    assert req1b["try"] == 2 and "messages" not in req1b
    assert resp1["latency_s"] >= 0 and resp1["usage"]["requests"] == 1
    assert resp1["tool_calls"][0]["function"]["arguments"] == '{"sql": "SELECT 1"}'
    # The second request logs only the two new messages, relative to request 1.
    assert req2["messages_base"] == 1 and req2["messages_from"] == 1 and len(req2["messages"]) == 2
    assert req2["messages_total"] == 3 and "tool_schemas" not in req2
    assert resp2["content"] == "done"
    assert req3["messages"] == [] and req3["messages_base"] == 2
    assert error["error_type"] == "LLMServerError" and error["gave_up"] == "retries exhausted: HTTP 500"
    assert all(e["ts"] and e["task_id"] == "task_1" for e in events)


def test_clients_sharing_a_trace_get_distinct_request_ids(tmp_path: Path) -> None:
    trace = TraceWriter(tmp_path, "t")
    with ScriptedModel([text("a"), text("b")]) as model:
        settings = LLMSettings(**model.connection(), api_key=None, model="m")

        async def go() -> list[int]:
            async with LLMClient(settings, trace=trace) as client:
                other = client.with_options(temperature=0.5)
                first = await client.chat([user_message("q")])
                second = await other.chat([user_message("q"), first.assistant_message()])
                return [first.request_id, second.request_id]

        ids = asyncio.run(go())
    assert ids == [1, 2]
    requests = [e for e in trace.read() if e["event"] == "request"]
    assert [r["request_id"] for r in requests] == [1, 2]
    assert requests[1]["messages_base"] == 1 and requests[1]["temperature"] == 0.5
