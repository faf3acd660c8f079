"""ScriptedServer: a real OpenAI-compatible HTTP server on 127.0.0.1 that answers from a script.

Threaded (one thread per connection), so concurrent requests are served in parallel.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..preflight import is_probe
from .turns import Delay, Garbage, HttpError, Text, ToolCalls, Turn, text

Handler = Callable[[dict[str, Any]], "Turn | str | None"]
Router = Callable[[dict[str, Any]], "str | None"]
Script = Sequence["Turn | str"] | Mapping[str, Sequence["Turn | str"]]

_CHARS_PER_TOKEN = 4  # rough, but stable: tests can assert on it
_COMPLETIONS_PATH = "/chat/completions"
_MODELS_PATH = "/models"
_PROPS_PATH = "/props"
# How a server words a context-length 400: OpenAI/vLLM (and llama-cpp-python) or llama.cpp.
OPENAI_WORDING = "openai"
LLAMA_CPP_WORDING = "llama.cpp"
_POLL_S = 0.01


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    key: str | None
    received_at: float
    preflight: bool = False
    """The preflight's one-token request (answered by the server itself, never by the script)."""


class ScriptedServer:
    """Answer chat completions from ``script`` (turns in order) and/or ``handler(request) -> turn``.

    ``script`` may be a mapping ``key -> turns`` for several concurrent conversations; ``route``
    picks the key from the request (default: the longest key that appears in the messages). A
    handler returning None falls back to the script. ``strict`` rejects requests a strict server
    (llama.cpp, OpenAI) rejects: assistant content null, orphan tool results.

    Real-server behaviours: ``context_window`` (tokens, counted as len(JSON)/4) answers a prompt
    over it with the 400 of ``wording`` (vLLM counts ``max_tokens`` in, llama.cpp does not) before
    any turn is used; ``report_window`` says it as vLLM's ``max_model_len`` in ``/v1/models``
    ("models") or llama.cpp's ``/props`` ("props"). ``one_at_a_time`` serves one completion at a
    time and, like llama.cpp, finishes a delayed answer after its client has gone;
    ``disconnects`` counts the clients that closed their connection while waiting for an answer.
    ``honor_max_tokens`` cuts a text answer longer than the request's ``max_tokens`` (counted as
    len/4) there, with finish_reason "length", as a real server does.
    ``prefill_rate`` (tokens/s) adds llama.cpp's ``timings`` to every answer, with a one-slot
    prefix cache: ``cache_n`` is the prompt's common prefix with the previous request's (tools,
    then messages), ``prompt_ms`` what reading the rest takes at that rate (no time passes).

    The preflight's one-token request (``datasolver.llm.preflight``) is answered "OK" by the server
    itself (after ``latency_s``), as any real server answers it: it takes no turn of the script or handler and is not
    in ``requests`` (``records`` has it). ``api_key`` (vLLM's ``--api-key``) answers 401 to every
    request without ``Authorization: Bearer <api_key>``. ``models`` (vLLM, OpenAI) is what
    ``/models`` lists, and a chat request for any other model gets vLLM's 404; by default
    ``/models`` lists ``model`` and any name is served (llama.cpp).
    """

    def __init__(
        self,
        script: Script | None = None,
        handler: Handler | None = None,
        latency_s: float = 0.0,
        *,
        route: Router | None = None,
        model: str = "fake-model",
        strict: bool = True,
        context_window: int | None = None,
        wording: str = OPENAI_WORDING,
        report_window: str | None = None,
        one_at_a_time: bool = False,
        honor_max_tokens: bool = False,
        prefill_rate: float | None = None,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
    ) -> None:
        if script is not None and isinstance(script, (str, bytes)):
            raise TypeError("script must be a sequence of turns or a mapping key -> turns")
        self.latency_s = latency_s
        self.model = model
        self.strict = strict
        self.context_window = context_window
        self.wording = wording
        self.report_window = report_window
        self.honor_max_tokens = honor_max_tokens
        self.api_key = api_key
        self.models = tuple(models) if models is not None else None
        self.errors: list[str] = []
        self.disconnects = 0
        self.overflows = 0  # requests refused for the context window
        self._serial = threading.Lock() if one_at_a_time else None
        self.prefill_rate = prefill_rate
        self._cached_prompt = ""  # the one slot's cached prompt (prefill_rate)
        self._handler = handler
        self._route = route
        self._queues: dict[str | None, list[Turn]] = {}
        if isinstance(script, Mapping):
            self._keyed = True
            for key, turns in script.items():
                self._queues[key] = [_as_turn(t) for t in turns]
        else:
            self._keyed = False
            self._queues[None] = [_as_turn(t) for t in script or []]
        self._records: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        """Bind a free port on 127.0.0.1 and serve in a background thread."""
        httpd = _Server(("127.0.0.1", 0), _RequestHandler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="ScriptedServer", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; pending delays are cut short."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what tests look at --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (only while started)."""
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def records(self) -> list[ReceivedRequest]:
        """Every request received so far (completions and others), in arrival order."""
        with self._lock:
            return list(self._records)

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies of the chat-completion requests received so far."""
        return [r.body for r in self.records if _path_only(r.path).endswith(_COMPLETIONS_PATH) and not r.preflight]

    @property
    def preflights(self) -> int:
        """The preflight requests received so far."""
        return sum(1 for r in self.records if r.preflight)

    def remaining(self, key: str | None = None) -> int:
        """Turns not yet served for ``key`` (None: the unkeyed script)."""
        with self._lock:
            return len(self._queues.get(key, []))

    # -- serving (called from handler threads) ---------------------------------------------------

    def _record(self, record: ReceivedRequest) -> None:
        with self._lock:
            self._records.append(record)

    def _problem(self, message: str) -> str:
        with self._lock:
            self.errors.append(message)
        return message

    def _key_for(self, body: dict[str, Any]) -> str | None:
        if not self._keyed:
            return None
        if self._route is not None:
            try:
                return self._route(body)
            except Exception as exc:
                self._problem(f"ScriptedServer: route raised {type(exc).__name__}: {exc}")
                return None
        with self._lock:
            keys = list(self._queues)
        return _route_by_key_in_messages(body, keys)

    def _next_turn(self, body: dict[str, Any], key: str | None) -> Turn | str:
        """The handler's turn, else the next scripted one; a string is an error for the client."""
        if self._handler is not None:
            try:
                turn = self._handler(body)
            except Exception as exc:  # a broken test handler must show up, not hang the client
                return self._problem(f"ScriptedServer: handler raised {type(exc).__name__}: {exc}")
            if turn is not None:
                return _as_turn(turn)
        with self._lock:
            queue = self._queues.get(key)
            if queue:
                return queue.pop(0)
        if self._keyed and key not in self._queues:
            return self._problem(f"ScriptedServer: no script for key {key!r}")
        return self._problem(f"ScriptedServer: script exhausted (key={key!r})")

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stop.wait(seconds)

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The prompt size this server counts for a request (what its usage reports)."""
        return _tokens(json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False))

    def _overflow(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The context-length error body, when the request does not fit the window."""
        if self.context_window is None:
            return None
        prompt = self.prompt_tokens(body)
        completion = int(body.get("max_tokens") or 0) if self.wording == OPENAI_WORDING else 0
        if prompt + completion <= self.context_window:
            return None
        with self._lock:
            self.overflows += 1
        if self.wording == LLAMA_CPP_WORDING:
            return {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                              "increasing it", "type": "exceed_context_size_error",
                              "n_prompt_tokens": prompt, "n_ctx": self.context_window}}
        return {"error": {"message": f"This model's maximum context length is {self.context_window} tokens. "
                          f"However, you requested {prompt + completion} tokens ({prompt} in the messages, "
                          f"{completion} in the completion). Please reduce the length of the messages or "
                          "completion.", "type": "BadRequestError", "param": None, "code": 400}}

    def _wait_watching(self, seconds: float, connection: socket.socket) -> None:
        """Wait (the answer is being "generated"), noting a client that closes meanwhile."""
        deadline = time.monotonic() + seconds
        gone = False
        while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if gone:
                self._stop.wait(min(left, 0.05))
                continue
            try:
                readable, _, _ = select.select([connection], [], [], min(left, _POLL_S))
                if readable and connection.recv(1, socket.MSG_PEEK) == b"":
                    gone = True
            except (OSError, ValueError):
                gone = True
            if gone:
                with self._lock:
                    self.disconnects += 1

    def _completion(self, body: dict[str, Any], turn: Text | ToolCalls) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        finish = "stop"
        if isinstance(turn, Text):
            message["content"] = turn.content
            limit = body.get("max_tokens")
            if self.honor_max_tokens and isinstance(limit, int) and _tokens(turn.content) > limit:
                message["content"], finish = turn.content[: limit * _CHARS_PER_TOKEN], "length"
        else:
            message["content"] = turn.content
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for call in turn.calls
            ]
            finish = "tool_calls"
        if turn.reasoning_content is not None:
            message["reasoning_content"] = turn.reasoning_content
        prompt = self.prompt_tokens(body)
        completion = max(1, _tokens(json.dumps(message, ensure_ascii=False)))
        timings = {"timings": self._timings(body, prompt, completion)} if self.prefill_rate else {}
        return {**timings,
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


    def _timings(self, body: dict[str, Any], prompt: int, completion: int) -> dict[str, Any]:
        """llama.cpp's ``timings``: tokens served from the slot's cache, and the rest's prefill time."""
        rendered = json.dumps([body.get("tools"), body.get("messages")], ensure_ascii=False)
        with self._lock:
            shared = len(os.path.commonprefix([self._cached_prompt, rendered]))
            self._cached_prompt = rendered
        cached = min(prompt, _tokens(rendered[:shared]))
        assert self.prefill_rate is not None
        return {"cache_n": cached, "prompt_n": prompt - cached,
                "prompt_ms": round((prompt - cached) / self.prefill_rate * 1000, 3), "predicted_n": completion}


def strict_violations(body: Any) -> list[str]:
    """What a strict OpenAI-compatible server would reject in this request body."""
    if not isinstance(body, dict):
        return ["request body must be a JSON object"]
    problems = []
    if not body.get("model"):
        problems.append("'model' is required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return problems + ["'messages' must be a non-empty list"]
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "user", "assistant", "tool", "developer"):
            problems.append(f"messages[{i}]: invalid role {role!r}")
            continue
        if role == "assistant":
            if m.get("content") is None:
                problems.append(f"messages[{i}]: assistant content must not be null")
            for call in m.get("tool_calls") or []:
                open_calls.add(call.get("id"))
                if not isinstance(call.get("function", {}).get("arguments"), str):
                    problems.append(f"messages[{i}]: tool_calls arguments must be a string")
        elif role == "tool":
            if m.get("tool_call_id") not in open_calls:
                problems.append(
                    f"messages[{i}]: tool result for unknown tool_call_id {m.get('tool_call_id')!r}"
                )
            if not isinstance(m.get("content"), str):
                problems.append(f"messages[{i}]: tool content must be a string")
    return problems


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a client that gave up must not hold close() hostage
    request_queue_size = 128  # a burst of concurrent connects must not overflow the backlog
    owner: ScriptedServer


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, each answer waits ~40 ms for a
    # delayed ACK, which would distort latency-bound benchmarks.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request stderr log."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        owner._record(self._received(None, None))
        if not self._key_accepted(owner):
            return
        if _path_only(self.path).endswith(_MODELS_PATH):
            data = [{"id": name, "object": "model", "created": 0, "owned_by": "datasolver"}
                    for name in (owner.models if owner.models is not None else (owner.model,))]
            if owner.report_window == "models" and owner.context_window:
                for entry in data:
                    entry["max_model_len"] = owner.context_window
            self._send_json(200, {"object": "list", "data": data})
        elif _path_only(self.path) == _PROPS_PATH and owner.report_window == "props" and owner.context_window:
            self._send_json(200, {"default_generation_settings": {"n_ctx": owner.context_window},
                                  "total_slots": 1, "model_path": owner.model})
        else:
            self._send_json(404, _error_body(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            owner._record(self._received(raw.decode("utf-8", "replace"), None))
            self._send_json(400, _error_body(400, "request body is not JSON"))
            return
        if not _path_only(self.path).endswith(_COMPLETIONS_PATH):
            owner._record(self._received(body, None))
            self._send_json(404, _error_body(404, f"no route POST {self.path}"))
            return
        if is_probe(body):  # the preflight: answered here, whatever the script holds
            owner._record(self._received(body, None, preflight=True))
            if self._key_accepted(owner) and self._model_served(owner, body):
                owner._wait_watching(owner.latency_s, self.connection)
                self._send_json(200, owner._completion(body, text("OK")))
            return
        key = owner._key_for(body) if isinstance(body, dict) else None
        owner._record(self._received(body, key))
        if not self._key_accepted(owner) or not self._model_served(owner, body):
            return
        if owner.strict and (problems := strict_violations(body)):
            owner._problem("rejected: " + "; ".join(problems))
            self._send_json(400, _error_body(400, "; ".join(problems)))
            return
        overflow = owner._overflow(body)
        if overflow is not None:
            self._send_json(400, overflow)
            return
        if owner._serial is None:
            self._serve(owner, body, key)
        else:
            with owner._serial:
                self._serve(owner, body, key)

    def _serve(self, owner: ScriptedServer, body: dict[str, Any], key: str | None) -> None:
        turn = owner._next_turn(body, key)
        owner._wait(owner.latency_s)
        self._answer(owner, body, turn)

    def _answer(self, owner: ScriptedServer, body: dict[str, Any], turn: Turn | str) -> None:
        if isinstance(turn, str):  # the fake itself could not answer: 400 so no client retries it
            self._send_json(400, _error_body(400, turn))
        elif isinstance(turn, Delay):
            owner._wait_watching(turn.seconds, self.connection)
            self._answer(owner, body, turn.then)
        elif isinstance(turn, HttpError):
            headers = dict(turn.headers)
            if turn.retry_after is not None:
                headers["Retry-After"] = str(turn.retry_after)
            payload = turn.body if turn.body is not None else _error_body(turn.status, f"scripted {turn.status}")
            self._send_json(turn.status, payload, headers)
        elif isinstance(turn, Garbage):
            self._send_raw(200, turn.body.encode("utf-8"), turn.content_type)
        else:
            self._send_json(200, owner._completion(body, turn))

    def _received(self, body: Any, key: str | None, *, preflight: bool = False) -> ReceivedRequest:
        return ReceivedRequest(
            method=self.command, path=self.path, headers=dict(self.headers.items()),
            body=body, key=key, received_at=time.time(), preflight=preflight,
        )

    def _key_accepted(self, owner: ScriptedServer) -> bool:
        """With ``api_key`` set, a request without that bearer key gets vLLM's 401 (and False)."""
        if owner.api_key is None or self.headers.get("Authorization") == f"Bearer {owner.api_key}":
            return True
        self._send_json(401, {"error": "Unauthorized"})
        return False

    def _model_served(self, owner: ScriptedServer, body: Any) -> bool:
        """With ``models`` set, a request for another model gets vLLM's 404 (and False)."""
        name = body.get("model") if isinstance(body, dict) else None
        if owner.models is None or name in owner.models:
            return True
        self._send_json(404, {"object": "error", "message": f"The model `{name}` does not exist.",
                              "type": "NotFoundError", "param": None, "code": 404})
        return False

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload, ensure_ascii=False)
        encoded = data.encode("utf-8") if isinstance(data, str) else data
        self._send_raw(status, encoded, "application/json", headers)

    def _send_raw(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left; that is the scenario being simulated


def _route_by_key_in_messages(body: dict[str, Any], keys: Sequence[str | None] = ()) -> str | None:
    """The longest script key found in the earliest message that mentions any key."""
    candidates = sorted((k for k in keys if k), key=len, reverse=True)
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        text_ = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        for key in candidates:
            if key in text_:
                return key
    return None


def _as_turn(turn: Turn | str) -> Turn:
    return text(turn) if isinstance(turn, str) else turn


def _tokens(s: str) -> int:
    return math.ceil(len(s) / _CHARS_PER_TOKEN)


def _error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted_error", "code": status}}


def _path_only(path: str) -> str:
    """A request path without its query string (servers route on the path alone)."""
    return path.partition("?")[0].rstrip("/")
