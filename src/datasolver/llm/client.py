"""LLMClient: async chat completions over the openai SDK, with our own traced retry loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import json
import ssl
import re
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx
import openai

from .constants import (
    CHARS_PER_TOKEN_LOW,
    DISCOVERY_TIMEOUT_S,
    EVENT_ERROR,
    EVENT_RESPONSE,
    EVENT_RETRY,
    PLACEHOLDER_API_KEY,
    PREFILL_TIMEOUT_FACTOR,
    REPLY_ALLOWANCE_S,
    SERVER_ERROR_MIN_STATUS,
    THINKING_BODY_KEY,
    THINKING_FLAG,
)
from .errors import (
    LLMAuthError,
    LLMBadRequestError,
    LLMConfigError,
    LLMConnectionError,
    LLMContextLengthError,
    LLMError,
    LLMRateLimitError,
    LLMServerError,
    LLMStatusError,
    LLMTimeoutError,
)
from .messages import normalize_history
from .response import ChatResult, parse_chat_completion
from .retry import parse_retry_after, retry_delay, should_retry
from .settings import LLMSettings, redact_url
from .text_calls import ID_PREFIX, parse_text_tool_calls
from .text_history import as_text_history, with_tools_prompt
from .trace import NULL_TRACE, TraceWriter
from .usage import Usage
from .window import SOURCE_ERROR, SOURCE_SERVER, ServerFacts, discover_window, is_context_error, parse_context_limit, reply_tokens

_CONTEXT_LENGTH = re.compile(
    r"context length|context window|context size|maximum context|too many tokens|prompt is too long|"
    r"maximum model length|max_model_len",
    re.IGNORECASE,
)
# A server that cannot take the `tools` field (llama.cpp without --jinja says "tools param requires
# --jinja flag"; others name "tools" or "tool_choice" in a 400).
_TOOLS_REJECTED = re.compile(
    r"\btools\b|tool_choice|--jinja|does not support tool|tool calls? (?:is|are) not supported", re.IGNORECASE
)
EVENT_TOOLS_REJECTED = "tools_rejected"
EVENT_WINDOW = "context_window"
# Settings that pick the endpoint cannot change per call: the SDK client is bound to them.
_CONNECTION_FIELDS = ("base_url", "api_key")


async def retry_pause(seconds: float) -> None:
    """The pause between retries: the one seam a test replaces to record each delay and not wait."""
    await asyncio.sleep(seconds)


# Entered around every HTTP request (each retry too): e.g. a slot of a cluster-wide request limit.
RequestGate = Callable[[], AbstractAsyncContextManager[Any]]


class LLMClient:
    """Holds settings, an SDK client, the task's Usage and its trace (a null trace keeps nothing); ``chat`` does the work.

    Per call, settings fields (``max_retries``, ``read_timeout``, ``temperature``, ``model`` …) may be
    given as keyword overrides; any other keyword (``max_tokens``, ``tool_choice`` …) goes to the
    request body. ``with_options`` makes a derived client sharing usage, trace and connection pool.
    ``request_gate`` (optional) is entered around every HTTP request, to bound requests in flight.
    """

    def __init__(
        self,
        settings: LLMSettings,
        trace: TraceWriter = NULL_TRACE,
        usage: Usage | None = None,
        *,
        request_gate: RequestGate | None = None,
        facts: ServerFacts | None = None,
        _sdk: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.settings = settings
        self.request_gate = request_gate
        self.trace = trace
        self.usage = usage if usage is not None else Usage()
        self.facts = facts if facts is not None else ServerFacts(settings.context_window)
        self._owns_sdk = _sdk is None
        self._sdk = _sdk if _sdk is not None else _make_sdk(settings, trace.task_id)
        for secret in [settings.api_key, *settings.url_secrets()]:
            trace.add_secret(secret)

    def with_options(self, **changes: Any) -> LLMClient:
        """A client with some settings changed, sharing usage, trace and (if possible) connections."""
        settings = self.settings.replace(**changes)
        same_endpoint = all(getattr(settings, f) == getattr(self.settings, f) for f in _CONNECTION_FIELDS)
        return LLMClient(settings, self.trace, self.usage, request_gate=self.request_gate,
                         facts=self.facts if same_endpoint else None,
                         _sdk=self._sdk if same_endpoint else None)

    @property
    def context_window(self) -> int | None:
        """The server's context window in tokens, when known (setting, server, or a 400)."""
        return self.facts.context_window

    def read_timeout_for(self, body: dict[str, Any], settings: LLMSettings | None = None) -> float:
        """Seconds to wait for a reply: `read_timeout`, or longer when the server's prefill speed is
        known (`facts.prefill_rate`) and this request's prompt would take longer to read: a CPU
        server reading a long prompt is slow, not gone (a 5,700-token prompt at 19 tokens a second
        passed the 300 s default, and the request was sent again). The prompt's tokens are bounded
        from above by its characters / `CHARS_PER_TOKEN_LOW` (CJK text is about one a token)."""
        settings = settings or self.settings
        rate = self.facts.prefill_rate
        if not rate:
            return settings.read_timeout
        chars = len(json.dumps(body.get("messages") or [], ensure_ascii=False))
        chars += len(json.dumps(body.get("tools") or [], ensure_ascii=False))
        reading = chars / CHARS_PER_TOKEN_LOW / rate
        return max(settings.read_timeout, reading * PREFILL_TIMEOUT_FACTOR + REPLY_ALLOWANCE_S)

    async def learn_context_window(self, answered: Mapping[str, Any] | None = None) -> int | None:
        """Ask the server once (vLLM ``/v1/models``, llama.cpp ``/props``) unless already known.

        These GETs are not chat requests and no task's usage counts them (``facts.asked`` lists them).
        ``answered``: what a URL already answered (the preflight's ``/models``), not asked again.
        """
        if self.facts.context_window is not None or self.facts.asked_server:
            return self.facts.context_window
        self.facts.asked_server = True
        window, asked = await discover_window(self.settings.base_url, self.settings.model, self._get_json,
                                              answered)
        if window:
            self.facts.learn_window(window, SOURCE_SERVER)
        self.facts.asked = [redact_url(url) for url in asked]  # facts travel (Ray): no credentials
        return self.facts.context_window

    async def get_json(self, url: str, *, timeout: float = DISCOVERY_TIMEOUT_S) -> Any:
        """GET ``url`` over the SDK's connection pool: the decoded JSON (None when the body is not
        JSON). Failures raise as ``chat``'s do: LLMConnectionError (no connection, or none within the
        connect timeout), LLMTimeoutError (no answer within ``timeout``), LLMStatusError and its kinds."""
        where, connect = self.settings.display_url, min(timeout, self.settings.connect_timeout)
        try:
            response = await self._sdk.get(url, cast_to=httpx.Response,
                                           options={"timeout": openai.Timeout(timeout, connect=connect)})
        except openai.OpenAIError as exc:
            raise _sdk_error(exc, where, read_timeout=timeout, connect_timeout=connect) from exc
        try:
            return response.json()
        except ValueError:
            return None

    async def _get_json(self, url: str) -> Any:
        """``get_json``, with None on any failure (an optional question)."""
        try:
            return await self.get_json(url)
        except LLMError:
            return None

    async def aclose(self) -> None:
        """Close the connection pool (a derived client leaves its parent's pool open)."""
        if self._owns_sdk:
            await self._sdk.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        enable_thinking: bool | None = None,
        attempt: int | None = None,
        **overrides: Any,
    ) -> ChatResult:
        """Send one chat completion, retrying transient failures; raise an LLMError when it fails.

        Every HTTP request sent is counted in ``usage`` (answered, failed or cancelled). ``attempt``
        (the caller's attempt number) goes into the trace events of this call. With tools offered
        and ``tool_mode`` other than "native", calls the model wrote as text in its content are
        returned as ``tool_calls`` (``via="text"``).
        """
        if not messages:
            raise ValueError("messages must not be empty")
        settings = self._settings_for_call(overrides)
        mode = self._tool_mode(settings, tools)
        body = self._request_body(settings, messages, tools, enable_thinking, dict(overrides), mode, self.facts)
        read_timeout = settings.read_timeout if "read_timeout" in overrides else self.read_timeout_for(body, settings)
        timeout = openai.Timeout(read_timeout, connect=settings.connect_timeout)
        request_id = self.trace.new_request_id()
        context = {} if attempt is None else {"attempt": attempt}
        started = time.monotonic()
        retries = tries = 0
        while True:
            tries += 1
            self.usage.add(requests=1, retries=1 if retries else 0)
            self._trace_request(request_id, tries, body, tools if mode != "text" else None, context)
            attempt_start = time.monotonic()
            try:
                result = parse_chat_completion(await self._send(body, timeout, settings))
            except LLMError as error:
                self.usage.add(requests=0, failed=1)
                latency = time.monotonic() - attempt_start
                if mode == "auto" and tools and _rejects_tools(error):
                    self.facts.tools_rejected, mode = True, "text"
                    self._trace_event(EVENT_TOOLS_REJECTED, request_id, tries, context,
                                      error=str(error), latency_s=round(latency, 3))
                    body = self._request_body(settings, messages, tools, enable_thinking, dict(overrides),
                                              mode, self.facts)
                    continue
                if isinstance(error, LLMContextLengthError):
                    self._learn_from_context_error(error)
                reason = should_retry(error)
                if reason is None or retries >= settings.max_retries:
                    error.retries_taken = retries
                    self._trace_error(request_id, tries, error, latency, reason, context)
                    raise
                await self._pause_before_retry(settings, request_id, tries, error, reason, latency, context)
                retries += 1
                continue
            except asyncio.CancelledError:  # a deadline hit mid-request: count it, leave a mark
                self.usage.add(requests=0, cancelled=1)
                self._trace_event(EVENT_ERROR, request_id, tries, context, error_type="CancelledError",
                                  error="cancelled by caller (connection closed)",
                                  latency_s=round(time.monotonic() - attempt_start, 3))
                raise
            latency = time.monotonic() - attempt_start
            result.latency_s = time.monotonic() - started
            result.retries_taken = retries
            result.request_id = request_id
            self.usage.add(result.usage.prompt_tokens, result.usage.completion_tokens, requests=0)
            if result.prefill_s is not None:  # a latency would count the reply's generation too
                self.facts.learn_prefill(result.prefilled_tokens, result.prefill_s)
            if tools and mode != "native" and not result.tool_calls:
                names = {t.get("function", {}).get("name") for t in tools}
                found = parse_text_tool_calls(result.content, id_prefix=f"{ID_PREFIX}{request_id}_", tool_names=names)
                if found.calls:
                    result.content, result.tool_calls, result.text_form = found.content, found.calls, found.form
            self._trace_response(request_id, tries, result, latency, context)
            return result

    def _tool_mode(self, settings: LLMSettings, tools: list[dict[str, Any]] | None) -> str:
        if tools and settings.tool_mode == "auto" and self.facts.tools_rejected:
            return "text"
        return settings.tool_mode

    def _learn_from_context_error(self, error: LLMContextLengthError) -> None:
        limit = parse_context_limit(str(error), error.body)
        error.limit = limit
        if limit is not None and self.facts.learn_window(limit.limit, SOURCE_ERROR):
            self.trace.event(EVENT_WINDOW, learned_from="error", **self.facts.as_dict())

    async def _pause_before_retry(
        self, settings: LLMSettings, request_id: int, tries: int, error: LLMError, reason: str,
        latency: float, context: dict[str, Any],
    ) -> None:
        """Count and trace the retry, then wait (Retry-After if the server gave one, else backoff)."""
        delay = retry_delay(
            tries - 1,
            parse_retry_after(error.headers) if isinstance(error, LLMStatusError) else None,
            initial_backoff=settings.initial_backoff,
            max_backoff=settings.max_backoff,
            retry_after_cap=settings.retry_after_cap,
        )
        self._trace_event(
            EVENT_RETRY, request_id, tries, context, reason=reason,
            delay_s=round(delay, 3), latency_s=round(latency, 3), error_type=type(error).__name__,
            status=getattr(error, "status_code", None), error=str(error),
        )
        await retry_pause(delay)

    # -- one attempt -------------------------------------------------------------------------

    async def _send(self, body: dict[str, Any], timeout: openai.Timeout, settings: LLMSettings) -> str:
        """POST once (the SDK never retries) and return the body text; map SDK errors to ours."""
        where = settings.display_url  # never the credentials of a user:password@ URL
        try:
            if self.request_gate is None:
                return await self._post_chat(body, timeout)
            async with self.request_gate():
                return await self._post_chat(body, timeout)
        except (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError) as exc:
            raise _sdk_error(exc, where, read_timeout=timeout.read or settings.read_timeout,
                             connect_timeout=settings.connect_timeout) from exc

    async def _post_chat(self, body: dict[str, Any], timeout: openai.Timeout) -> str:
        """POST /chat/completions with our body as it is: the SDK's ``create()`` first walks every
        message through its typed-dict transform, ~25 ms of CPU per request in a long
        conversation, for JSON that needs no conversion. Errors and auth stay the SDK's."""
        payload, options = dict(body), {"timeout": timeout}
        for field, option in _REQUEST_OPTIONS.items():
            if field in payload:
                options[option] = payload.pop(field)
        response = await self._sdk.post("/chat/completions", body=payload, cast_to=httpx.Response,
                                        options=options)  # type: ignore[arg-type]
        return response.text

    # -- request building ----------------------------------------------------------------------

    def _settings_for_call(self, overrides: dict[str, Any]) -> LLMSettings:
        """Pop settings-shaped overrides out of ``overrides`` and return the effective settings."""
        names = self.settings.setting_names()
        changes = {k: overrides.pop(k) for k in list(overrides) if k in names}
        fixed = [k for k in changes if k in _CONNECTION_FIELDS]
        if fixed:
            raise LLMConfigError(
                f"{', '.join(fixed)} cannot change per call; use client.with_options(...) instead"
            )
        return self.settings.replace(**changes) if changes else self.settings

    @staticmethod
    def _request_body(
        settings: LLMSettings,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        enable_thinking: bool | None,
        overrides: dict[str, Any],
        mode: str = "native",
        facts: ServerFacts | None = None,
    ) -> dict[str, Any]:
        history = normalize_history(messages)
        if mode != "native":
            history = as_text_history(history, every_call=mode == "text")
        if tools and mode == "text":
            history = with_tools_prompt(history, tools)
        body: dict[str, Any] = {
            "model": settings.model,
            "messages": history,
            "temperature": settings.temperature,
        }
        max_tokens = reply_tokens(settings.max_tokens, facts.context_window if facts is not None else None)
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if tools and mode != "text":
            body["tools"] = tools
        extra_body = dict(overrides.pop("extra_body", None) or {})
        thinking = settings.enable_thinking if enable_thinking is None else enable_thinking
        if thinking is not None:
            template_kwargs = dict(extra_body.get(THINKING_BODY_KEY) or {})
            template_kwargs[THINKING_FLAG] = thinking
            extra_body[THINKING_BODY_KEY] = template_kwargs
        if extra_body:
            body["extra_body"] = extra_body
        body.update(overrides)
        return body

    # -- trace ---------------------------------------------------------------------------------

    def _trace_event(self, kind: str, request_id: int, tries: int, context: dict[str, Any], **fields: Any) -> None:
        self.trace.event(kind, request_id=request_id, **context, **{"try": tries}, **fields)

    def _trace_request(
        self, request_id: int, tries: int, body: dict[str, Any], tools: list[dict[str, Any]] | None,
        context: dict[str, Any],
    ) -> None:
        fields = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        self.trace.request(request_id, tries, body["messages"], tools, **context, **fields)

    def _trace_response(
        self, request_id: int, tries: int, result: ChatResult, latency: float, context: dict[str, Any]
    ) -> None:
        extra = {"via": "text", "text_form": result.text_form} if result.text_form else {}
        if result.cached_tokens:
            extra["cached_tokens"] = result.cached_tokens
        if result.prefill_s is not None:
            extra["prefill_s"] = round(result.prefill_s, 3)
        self._trace_event(
            EVENT_RESPONSE, request_id, tries, context, latency_s=round(latency, 3),
            finish_reason=result.finish_reason, content=result.content, reasoning=result.reasoning,
            tool_calls=[c.to_openai() for c in result.tool_calls], usage=result.usage.as_dict(), **extra,
        )

    def _trace_error(
        self, request_id: int, tries: int, error: LLMError, latency: float, reason: str | None,
        context: dict[str, Any],
    ) -> None:
        limit = getattr(error, "limit", None)
        extra = {"context_limit": limit.limit, "requested_tokens": limit.requested} if limit is not None else {}
        self._trace_event(
            EVENT_ERROR, request_id, tries, context, latency_s=round(latency, 3),
            error_type=type(error).__name__, status=getattr(error, "status_code", None),
            error=str(error), retries_taken=error.retries_taken,
            gave_up=("retries exhausted: " + reason) if reason else "not retryable", **extra,
        )


def chat_sync(
    settings: LLMSettings,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    trace: TraceWriter = NULL_TRACE,
    usage: Usage | None = None,
    **kwargs: Any,
) -> ChatResult:
    """One call from synchronous code (scripts, the CLI). Not for use inside a running event loop."""

    async def _once() -> ChatResult:
        async with LLMClient(settings, trace, usage) as client:
            return await client.chat(messages, tools, **kwargs)

    return asyncio.run(_once())


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process (CA bundle, SSL_CERT_FILE / SSL_CERT_DIR read once): each new
    client loading the CA bundle again cost ~25 ms of CPU, once per task and per helper client."""
    return httpx.create_ssl_context()


def _preload_connection_pool() -> None:
    """Import the SDK's HTTP connection-pool package now: httpx imports it (and trio, when
    installed) when the first client is built, ~0.25-0.5 s that landed inside a batch's first task."""
    httpx_flavour = next((c.__module__.split(".")[0] for c in openai.DefaultAsyncHttpxClient.__mro__
                          if c.__module__.startswith("httpx")), "httpx")
    with contextlib.suppress(ImportError):
        importlib.import_module(httpx_flavour.replace("httpx", "httpcore", 1))


_preload_connection_pool()

# create()'s keywords that are request options, not JSON fields.
_REQUEST_OPTIONS = {"extra_body": "extra_json", "extra_headers": "headers", "extra_query": "params"}


def _make_sdk(settings: LLMSettings, task_id: str | None = None) -> openai.AsyncOpenAI:
    if settings.transport is not None:  # answered in-process (replay): no socket is opened
        http_client = httpx.AsyncClient(transport=settings.transport(task_id))
    else:  # the SDK's own defaults (limits, redirects, proxies from the environment), shared TLS context
        http_client = openai.DefaultAsyncHttpxClient(verify=_tls_context())
    return openai.AsyncOpenAI(
        http_client=http_client,
        base_url=settings.base_url,
        api_key=settings.api_key or PLACEHOLDER_API_KEY,
        timeout=openai.Timeout(settings.read_timeout, connect=settings.connect_timeout),
        max_retries=0,  # our loop retries, so each retry and its reason reach the trace
    )


def _sdk_error(exc: openai.OpenAIError, where: str, *, read_timeout: float, connect_timeout: float) -> LLMError:
    """The llm room's error for an SDK error (the one mapping, for chat requests and GETs alike)."""
    if isinstance(exc, openai.APITimeoutError):
        if isinstance(exc.__cause__, httpx.ConnectTimeout):  # no connection at all: the host is not answering
            error = LLMTimeoutError(f"Cannot reach {where}: no connection within {connect_timeout:g}s")
            error.connecting = True
            return error
        return LLMTimeoutError(f"No response from {where} within {read_timeout:g}s "
                               f"(connect timeout {connect_timeout:g}s)")
    if isinstance(exc, openai.APIConnectionError):
        return LLMConnectionError(f"Cannot reach {where}: {exc.__cause__ or exc}")
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc, where)
    return LLMError(f"{where}: {exc}")


def _status_error(exc: openai.APIStatusError, where: str) -> LLMStatusError:
    status = exc.status_code
    detail = _error_detail(exc.body) or exc.message
    message = f"HTTP {status} from {where}: {detail}"
    cls: type[LLMStatusError]
    if is_context_error(str(detail), exc.body):  # llama.cpp builds before 2025-09 answer it with 500
        cls = LLMContextLengthError
    elif status in (400, 413, 422):
        cls = LLMContextLengthError if _CONTEXT_LENGTH.search(str(detail)) else LLMBadRequestError
    elif status in (401, 403):
        cls = LLMAuthError
    elif status == 429:
        cls = LLMRateLimitError
    elif status >= SERVER_ERROR_MIN_STATUS:
        cls = LLMServerError
    else:
        cls = LLMStatusError
    return cls(message, status_code=status, body=exc.body, headers=dict(exc.response.headers))


def _error_detail(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner)
        return str(inner)
    return "" if body is None else str(body)


def _rejects_tools(error: LLMError) -> bool:
    """A 400 that refuses the ``tools`` field itself (not a context-length error)."""
    return (isinstance(error, LLMBadRequestError) and not isinstance(error, LLMContextLengthError)
            and bool(_TOOLS_REJECTED.search(str(error))))
