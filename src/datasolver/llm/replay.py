"""Replay: an httpx transport that answers chat requests from a task's recorded trace, in order.

A trace records, for every request attempt, either the response the client parsed (content,
reasoning, tool calls, usage, finish reason) or the failure it met (HTTP status and message, a
timeout, a refused connection). ``exchanges_from_events`` turns those records back into HTTP
answers; ``ReplayTransport`` serves them one per request, so the real client, retry loop and
parser run unchanged and no socket is ever opened. A request past the end of the recording gets a
non-retryable HTTP 400 naming the request number and is counted (``ReplayCursor.missing``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx

from datasolver.untrusted_json import as_dict, as_int

from .constants import EVENT_ERROR, EVENT_RESPONSE, EVENT_RETRY

REPLAY_BASE_URL = "http://replay.invalid/v1"
"""The base URL replay settings carry: never contacted (the transport answers every request)."""
_EXHAUSTED_STATUS = 400


@dataclass(frozen=True)
class Exchange:
    """One recorded request attempt's outcome: a response body, an HTTP error, or a network failure."""

    request_id: int
    attempt: int
    status: int = 200
    body: dict[str, Any] | None = None
    failure: str | None = None
    """"timeout" or "connection" when no HTTP answer came back; "bad_body" for an unusable body."""
    message: str = ""


def exchanges_from_events(events: Iterable[dict[str, Any]]) -> list[Exchange]:
    """Every request attempt's recorded outcome, in the order they happened.

    Responses become chat-completion bodies; ``retry`` and ``error`` records become the HTTP error
    or network failure they describe. A cancelled request (a deadline hit mid-flight) has no
    outcome to replay and ends nothing: later requests still get their recorded answers.
    """
    out: list[Exchange] = []
    for event in events:
        kind = event.get("event")
        if kind not in (EVENT_RESPONSE, EVENT_RETRY, EVENT_ERROR) or "request_id" not in event:
            continue
        request_id, attempt = as_int(event.get("request_id")), as_int(event.get("attempt"), 1) or 1
        if kind == EVENT_RESPONSE:
            out.append(Exchange(request_id, attempt, body=response_body(event)))
            continue
        error_type = str(event.get("error_type") or "")
        message = str(event.get("error") or "")
        if error_type == "CancelledError":
            continue
        status = event.get("status")
        if isinstance(status, int) and status >= 400:
            out.append(Exchange(request_id, attempt, status=status, message=_detail(message)))
        elif error_type == "LLMTimeoutError":
            out.append(Exchange(request_id, attempt, failure="timeout", message=message))
        elif error_type == "LLMConnectionError":
            out.append(Exchange(request_id, attempt, failure="connection", message=message))
        else:
            out.append(Exchange(request_id, attempt, failure="bad_body", message=message))
    return out


def response_body(event: dict[str, Any]) -> dict[str, Any]:
    """The OpenAI chat-completion body that parses back to the recorded response."""
    message: dict[str, Any] = {"role": "assistant", "content": event.get("content") or ""}
    if event.get("reasoning"):
        message["reasoning_content"] = event["reasoning"]
    if event.get("tool_calls"):
        message["tool_calls"] = event["tool_calls"]
    usage = as_dict(event.get("usage"))
    prompt, completion = as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))
    return {
        "id": f"replay-{event.get('request_id')}-{event.get('attempt', 1)}",
        "object": "chat.completion",
        "model": str(event.get("model") or "replay"),
        "choices": [{"index": 0, "message": message, "finish_reason": event.get("finish_reason")}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


@dataclass
class ReplayCursor:
    """One task's recording and how far the replay has read it (shared by all its clients)."""

    exchanges: list[Exchange]
    served: int = 0
    missing: int = 0
    """Requests that came after the recording ran out."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next(self) -> Exchange | None:
        with self._lock:
            if self.served < len(self.exchanges):
                self.served += 1
                return self.exchanges[self.served - 1]
            self.missing += 1
            return None

    @property
    def unused(self) -> int:
        """Recorded exchanges the replay never asked for."""
        return len(self.exchanges) - self.served


class ReplayTransport(httpx.AsyncBaseTransport):
    """Answers every HTTP request with the cursor's next recorded exchange; never opens a socket."""

    def __init__(self, cursor: ReplayCursor) -> None:
        self.cursor = cursor

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            # Side questions (the context-window GETs of /models and /props) were never recorded
            # as exchanges: answer them "not found" instead of spending a recorded answer.
            return _json_response(request, 404, {"error": {"message": "replay: not recorded"}})
        exchange = self.cursor.next()
        if exchange is None:
            number = self.cursor.served + self.cursor.missing
            return _json_response(request, _EXHAUSTED_STATUS, {"error": {"message": (
                f"replay: the recording holds {len(self.cursor.exchanges)} request attempt(s) and has "
                f"no answer for attempt {number}")}})
        if exchange.failure == "timeout":
            raise httpx.ReadTimeout(f"replayed: {exchange.message}", request=request)
        if exchange.failure == "connection":
            raise httpx.ConnectError(f"replayed: {exchange.message}", request=request)
        if exchange.failure == "bad_body":
            return httpx.Response(200, text=f"replayed unusable body: {exchange.message}", request=request)
        if exchange.status >= 400:
            return _json_response(request, exchange.status, {"error": {"message": exchange.message}})
        return _json_response(request, 200, exchange.body or {})


class ReplayLibrary:
    """Recordings by task id; ``transport_for`` is the factory an ``LLMSettings.transport`` takes."""

    def __init__(self, recordings: dict[str, list[Exchange]]) -> None:
        self._cursors = {task_id: ReplayCursor(list(ex)) for task_id, ex in recordings.items()}
        self._lock = threading.Lock()

    def cursor(self, task_id: str | None) -> ReplayCursor:
        """The task's cursor (an empty recording for a task that has none)."""
        with self._lock:
            return self._cursors.setdefault(task_id or "", ReplayCursor([]))

    def transport_for(self, task_id: str | None) -> httpx.AsyncBaseTransport:
        return ReplayTransport(self.cursor(task_id))


def _json_response(request: httpx.Request, status: int, payload: dict[str, Any]) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                          headers={"content-type": "application/json"}, request=request)


def _detail(message: str) -> str:
    """The server's own words from a recorded "HTTP 500 from URL: detail" message."""
    head, sep, tail = message.partition(": ")
    return tail if sep and head.startswith("HTTP ") else message
