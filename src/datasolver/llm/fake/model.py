"""ScriptedModel: the scripted OpenAI-compatible model itself, with no I/O of its own.

It takes a request (method, path, headers, body bytes) and says what to answer: an HTTP reply, or,
for an accepted chat completion, a pending one whose turn, latency and delays the face serves. Two
faces serve it: ``ScriptedServer`` (a real HTTP server on 127.0.0.1, server.py) and
``ScriptedTransport`` (an httpx transport under the real client, transport.py: no socket, thread
or process). Both record, route, check and answer through this one class.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..preflight import is_probe, is_warm_up
from .exchange import Pending, ReceivedRequest, Reply
from .transport import ScriptedTransport
from .turns import Garbage, HttpError, Text, ToolCalls, Turn, text

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
SCRIPTED_BASE_URL = "http://scripted.invalid/v1"
"""The base URL of a model answered at the transport: never contacted (the transport answers)."""


class ScriptedModel:
    """Answer chat completions from ``script`` (turns in order) and/or ``handler(request) -> turn``.

    ``script`` may be a mapping ``key -> turns`` for several concurrent conversations; ``route``
    picks the key from the request (default: the longest key that appears in the messages). A
    handler returning None falls back to the script. ``strict`` rejects requests a strict server
    (llama.cpp, OpenAI) rejects: assistant content null, orphan tool results.

    Real-server behaviours: ``context_window`` (tokens, counted as len(JSON)/4) answers a prompt
    over it with the 400 of ``wording`` (vLLM counts ``max_tokens`` in, llama.cpp does not) before
    any turn is used; ``report_window`` says it as vLLM's ``max_model_len`` in ``/v1/models``
    ("models") or llama.cpp's ``/props`` ("props"). ``latency_s`` passes before every answer.
    ``honor_max_tokens`` cuts a text answer longer than the request's ``max_tokens`` (counted as
    len/4) there, with finish_reason "length", as a real server does.
    ``prefill_rate`` (tokens/s) adds llama.cpp's ``timings`` to every answer, with a one-slot
    prefix cache: ``cache_n`` is the prompt's common prefix with the previous request's (tools,
    then messages), ``prompt_ms`` what reading the rest takes at that rate (no time passes).
    ``disconnects`` counts the clients that left while waiting for an answer.

    The preflight's one-token request and a batch's warm-up (``datasolver.llm.preflight``) are
    answered "OK" by the model itself (after ``latency_s``), as any real server answers them: they
    take no turn of the script or handler and are not in ``requests`` (``records`` has them). ``api_key`` (vLLM's ``--api-key``)
    answers 401 to every request without ``Authorization: Bearer <api_key>``. ``models`` (vLLM,
    OpenAI) is what ``/models`` lists, and a chat request for any other model gets vLLM's 404; by
    default ``/models`` lists ``model`` and any name is served (llama.cpp).

    Used directly, it answers at the transport (``transport``, ``connection()``); ``ScriptedServer``
    serves the same model over HTTP.
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
        self.prefill_rate = prefill_rate
        self.api_key = api_key
        self.models = tuple(models) if models is not None else None
        self.errors: list[str] = []
        self.disconnects = 0
        self.overflows = 0  # requests refused for the context window
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

    # -- how a client reaches it -----------------------------------------------------------------

    def transport(self, task_id: str | None = None) -> ScriptedTransport:
        """An httpx transport answering from this model (``LLMSettings.transport`` takes this method;
        every task's client shares the one model)."""
        return ScriptedTransport(self)

    def connection(self) -> dict[str, Any]:
        """The ``LLMSettings`` fields that send a client's requests here."""
        return {"base_url": SCRIPTED_BASE_URL, "transport": self.transport}

    def __enter__(self) -> ScriptedModel:
        """Nothing to start at the transport (a ``with`` reads the same as for the server)."""
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    # -- what tests look at --------------------------------------------------------------------

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
        """The preflight requests received so far (a batch's warm-up, also answered by the model, aside)."""
        return sum(1 for r in self.records if r.preflight and not is_warm_up(r.body))

    def remaining(self, key: str | None = None) -> int:
        """Turns not yet served for ``key`` (None: the unkeyed script)."""
        with self._lock:
            return len(self._queues.get(key, []))

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        """The prompt size this model counts for a request (what its usage reports)."""
        return _tokens(json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False))

    # -- answering (any thread; the faces call these) ---------------------------------------------

    def receive(self, method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Reply | Pending:
        """Record one request and say what to answer: a reply, or a completion to serve."""
        route = _path_only(path)
        if method != "POST":
            self._record(method, path, headers, None, None)
            if (refused := self._key_refused(headers)) is not None:
                return refused
            return self._get(path) if method == "GET" else _json_reply(501, _error_body(501, f"no {method}"))
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._record(method, path, headers, raw.decode("utf-8", "replace"), None)
            return _json_reply(400, _error_body(400, "request body is not JSON"))
        if not route.endswith(_COMPLETIONS_PATH):
            self._record(method, path, headers, body, None)
            return _json_reply(404, _error_body(404, f"no route POST {path}"))
        if is_probe(body) or is_warm_up(body):  # the preflight, a batch's warm-up: answered here, not scripted
            self._record(method, path, headers, body, None, preflight=True)
            refused = self._key_refused(headers) or self._model_refused(body)
            return refused if refused is not None else Pending(body, None, preset=text("OK"))
        key = self._key_for(body) if isinstance(body, dict) else None
        self._record(method, path, headers, body, key)
        if (refused := self._key_refused(headers) or self._model_refused(body)) is not None:
            return refused
        if self.strict and (problems := strict_violations(body)):
            self._problem("rejected: " + "; ".join(problems))
            return _json_reply(400, _error_body(400, "; ".join(problems)))
        overflow = self._overflow(body)
        if overflow is not None:
            return _json_reply(400, overflow)
        return Pending(body, key)

    def next_turn(self, pending: Pending) -> Turn | str:
        """The handler's turn, else the next scripted one; a string is an error for the client."""
        if pending.preset is not None:
            return pending.preset
        if self._handler is not None:
            try:
                turn = self._handler(pending.body)
            except Exception as exc:  # a broken test handler must show up, not hang the client
                return self._problem(f"ScriptedServer: handler raised {type(exc).__name__}: {exc}")
            if turn is not None:
                return _as_turn(turn)
        with self._lock:
            queue = self._queues.get(pending.key)
            if queue:
                return queue.pop(0)
        if self._keyed and pending.key not in self._queues:
            return self._problem(f"ScriptedServer: no script for key {pending.key!r}")
        return self._problem(f"ScriptedServer: script exhausted (key={pending.key!r})")

    def reply(self, body: dict[str, Any], turn: Turn | str) -> Reply:
        """The HTTP answer of a turn that is not a ``Delay`` (the face waits those out first)."""
        if isinstance(turn, str):  # the fake itself could not answer: 400 so no client retries it
            return _json_reply(400, _error_body(400, turn))
        if isinstance(turn, HttpError):
            headers = dict(turn.headers)
            if turn.retry_after is not None:
                headers["Retry-After"] = str(turn.retry_after)
            payload = turn.body if turn.body is not None else _error_body(turn.status, f"scripted {turn.status}")
            return _json_reply(turn.status, payload, headers)
        if isinstance(turn, Garbage):
            return Reply(200, turn.body.encode("utf-8"), turn.content_type)
        if isinstance(turn, (Text, ToolCalls)):
            return _json_reply(200, self._completion(body, turn))
        raise TypeError(f"a face must wait out {type(turn).__name__} before asking for its reply")

    def client_left(self) -> None:
        """A client closed its connection (or gave up) while waiting for an answer."""
        with self._lock:
            self.disconnects += 1

    # -- inside ---------------------------------------------------------------------------------------

    def _get(self, path: str) -> Reply:
        route = _path_only(path)
        if route.endswith(_MODELS_PATH):
            data = [{"id": name, "object": "model", "created": 0, "owned_by": "datasolver"}
                    for name in (self.models if self.models is not None else (self.model,))]
            if self.report_window == "models" and self.context_window:
                for entry in data:
                    entry["max_model_len"] = self.context_window
            return _json_reply(200, {"object": "list", "data": data})
        if route == _PROPS_PATH and self.report_window == "props" and self.context_window:
            return _json_reply(200, {"default_generation_settings": {"n_ctx": self.context_window},
                                     "total_slots": 1, "model_path": self.model})
        return _json_reply(404, _error_body(404, f"no route GET {path}"))

    def _key_refused(self, headers: Mapping[str, str]) -> Reply | None:
        """With ``api_key`` set, a request without that bearer key gets vLLM's 401."""
        if self.api_key is None:
            return None
        given = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        return None if given == f"Bearer {self.api_key}" else _json_reply(401, {"error": "Unauthorized"})

    def _model_refused(self, body: Any) -> Reply | None:
        """With ``models`` set, a request for another model gets vLLM's 404."""
        name = body.get("model") if isinstance(body, dict) else None
        if self.models is None or name in self.models:
            return None
        return _json_reply(404, {"object": "error", "message": f"The model `{name}` does not exist.",
                                 "type": "NotFoundError", "param": None, "code": 404})

    def _record(self, method: str, path: str, headers: Mapping[str, str], body: Any, key: str | None, *,
                preflight: bool = False) -> None:
        record = ReceivedRequest(method=method, path=path, headers=dict(headers.items()), body=body, key=key,
                                 received_at=time.time(), preflight=preflight)
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


def _json_reply(status: int, payload: Any, headers: Mapping[str, str] | None = None) -> Reply:
    """A JSON answer; a scripted body given as text or bytes is sent as it is."""
    data = payload if isinstance(payload, (bytes, str)) else json.dumps(payload, ensure_ascii=False)
    encoded = data.encode("utf-8") if isinstance(data, str) else data
    return Reply(status, encoded, "application/json", tuple((headers or {}).items()))


def _path_only(path: str) -> str:
    """A request path without its query string (servers route on the path alone)."""
    return path.partition("?")[0].rstrip("/")
