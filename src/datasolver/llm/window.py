"""The server's context window: stated by the user, reported by the server, or read from a 400.

What servers report (looked up in their sources and issue threads):
- vLLM: ``GET /v1/models`` lists each model with ``max_model_len``; over it, a 400 "This model's
  maximum context length is 8192 tokens. However, you requested 8625 tokens (…)" (the OpenAI
  wording, which llama-cpp-python's server uses too).
- llama.cpp ``llama-server``: ``GET /props`` has ``default_generation_settings.n_ctx`` (newer
  builds also a top-level ``n_ctx``); over it, an ``exceed_context_size_error`` ("the request
  exceeds the available context size …") carrying ``n_prompt_tokens`` and ``n_ctx``, as 400
  (older builds: 500).
- llama-cpp-python (older): "Requested tokens (2138) exceed context window of 2048".
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

# Window sources, in the order they are trusted.
SOURCE_SETTING = "setting"
SOURCE_SERVER = "server"
SOURCE_ERROR = "error"

_OPENAI_WORDING = re.compile(
    r"maximum context length is\s+(\d+)\s+tokens.*?(?:requested|resulted in)\s+(\d+)\s+tokens",
    re.IGNORECASE | re.DOTALL,
)
_LIMIT_ONLY = re.compile(r"maximum context length is\s+(\d+)", re.IGNORECASE)
_LLAMA_PY = re.compile(r"Requested tokens \((\d+)\) exceed context window of (\d+)", re.IGNORECASE)
_LLAMA_CPP_TYPE = "exceed_context_size_error"
_LLAMA_CPP_WORDING = re.compile(r"exceeds? the available context size", re.IGNORECASE)


@dataclass(frozen=True)
class ContextLimit:
    """What a context-length error states: the window and (when said) the tokens requested."""

    limit: int
    requested: int | None = None

    @property
    def ratio(self) -> float | None:
        """limit / requested (< 1): the least the request must shrink by, when both are known."""
        if not self.requested or self.requested <= 0:
            return None
        return self.limit / self.requested


def is_context_error(message: str, body: Any = None) -> bool:
    """Whether an error message/body says the prompt does not fit the context window."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and inner.get("type") == _LLAMA_CPP_TYPE:
        return True
    return bool(_LLAMA_CPP_WORDING.search(message) or _LIMIT_ONLY.search(message) or _LLAMA_PY.search(message))


def parse_context_limit(message: str, body: Any = None) -> ContextLimit | None:
    """The numbers a context-length error states (OpenAI/vLLM, llama.cpp, llama-cpp-python)."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(inner, dict) and _as_int(inner.get("n_ctx")):
        return ContextLimit(_as_int(inner.get("n_ctx")), _as_int(inner.get("n_prompt_tokens")) or None)
    if m := _OPENAI_WORDING.search(message):
        return ContextLimit(int(m.group(1)), int(m.group(2)))
    if m := _LLAMA_PY.search(message):
        return ContextLimit(int(m.group(2)), int(m.group(1)))
    if m := _LIMIT_ONLY.search(message):
        return ContextLimit(int(m.group(1)))
    return None


def window_from_models(payload: Any, model: str) -> int | None:
    """``max_model_len`` (vLLM) of ``model`` in a ``/v1/models`` answer (the only model if one)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    entries = [d for d in data if isinstance(d, dict)]
    chosen = [d for d in entries if d.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        value = _as_int(entry.get("max_model_len"))
        if value:
            return value
    return None


def window_from_props(payload: Any) -> int | None:
    """``n_ctx`` in llama.cpp's ``/props`` answer."""
    if not isinstance(payload, dict):
        return None
    settings = payload.get("default_generation_settings")
    if isinstance(settings, dict) and _as_int(settings.get("n_ctx")):
        return _as_int(settings.get("n_ctx"))
    return _as_int(payload.get("n_ctx")) or None


def models_url(base_url: str) -> str:
    """``<base>/models``: the model list (vLLM adds each model's ``max_model_len``)."""
    return f"{base_url.rstrip('/')}/models"


def model_ids(payload: Any) -> tuple[str, ...] | None:
    """The model ids of a ``/models`` answer (OpenAI's ``{"data": [{"id": …}]}``); None when it is not one."""
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    return tuple(str(d["id"]) for d in data if isinstance(d, dict) and isinstance(d.get("id"), str))


async def discover_window(
    base_url: str, model: str, get_json: Callable[[str], Awaitable[Any]],
    answered: Mapping[str, Any] | None = None,
) -> tuple[int | None, list[str]]:
    """Ask the server: ``/models`` (vLLM), then ``/props`` (llama.cpp). Returns (window, URLs asked).

    ``get_json(url)`` returns the decoded answer, or None when the server gave none (an error
    status, a connection failure, a body that is not JSON). ``answered`` holds what a URL has
    already answered (the preflight's ``/models``): it is read from there, not asked again.
    """
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    asked: list[str] = []
    known = answered or {}
    for url, reader in ((models_url(base_url), lambda p: window_from_models(p, model)),
                        (f"{root}/props", window_from_props)):
        asked.append(url)
        window = reader(known[url] if url in known else await get_json(url))
        if window:
            return window, asked
    return None, asked


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


# Output room asked per request is capped at 1/REPLY_SHARE of a known window, so a small window
# still leaves most of itself for the prompt (vLLM rejects prompt + max_tokens > max_model_len).
REPLY_SHARE = 8
MIN_REPLY_TOKENS = 256


def reply_tokens(max_tokens: int | None, window: int | None) -> int | None:
    """The ``max_tokens`` to send: the setting, capped at an eighth of a known window."""
    if window is None:
        return max_tokens
    cap = max(MIN_REPLY_TOKENS, window // REPLY_SHARE)
    return cap if max_tokens is None else min(max_tokens, cap)


# A prefill speed is learnt only from replies that processed at least this many prompt tokens
# (a prompt of a few tokens measures the server's fixed overhead, not its speed). Low enough that
# the turns of a conversation count: after an opening read from the cache, a turn adds 100-300.
MIN_PREFILL_SAMPLE = 64


class ServerFacts:
    """What one endpoint has shown about itself, shared by every client (and task) that uses it.

    ``context_window`` and where it came from (the setting, the server, a context-length 400);
    ``tools_rejected`` once the server refused the ``tools`` field (then calls travel as text);
    ``prefill_rate``: prompt tokens per second the server processes, from its replies.
    Plain attributes: every writer stores a learned value whole, so no lock is needed.
    """

    def __init__(self, context_window: int | None = None) -> None:
        self.context_window = context_window
        self.window_source: str | None = SOURCE_SETTING if context_window else None
        self.asked_server = False
        self.asked: list[str] = []  # the URLs asked for the window
        self.tools_rejected = False
        self.prefill_rate: float | None = None

    def learn_prefill(self, tokens: int, seconds: float) -> bool:
        """Record a reply whose server processed ``tokens`` uncached prompt tokens in ``seconds`` (as
        llama.cpp's ``timings`` say). The rate is the mean of the latest sample and the previous
        rate, so one odd reply moves it only halfway."""
        if tokens < MIN_PREFILL_SAMPLE or seconds <= 0:
            return False
        rate = tokens / seconds
        self.prefill_rate = rate if self.prefill_rate is None else (self.prefill_rate + rate) / 2
        return True

    def learn_window(self, window: int, source: str) -> bool:
        """Record a window; a stated setting is never overridden, a smaller stated limit wins."""
        if window < 1 or self.window_source == SOURCE_SETTING:
            return False
        if self.context_window is not None and window >= self.context_window and source == SOURCE_ERROR:
            return False
        self.context_window, self.window_source = window, source
        return True

    def merge(self, other: ServerFacts) -> None:
        """Take in what another copy of these facts learnt (a Ray task's, returned to the driver),
        a stated window is kept, else the smaller learnt window wins (whichever copy learnt it
        first); prefill rates are averaged."""
        window = other.context_window
        if (window is not None and other.window_source not in (None, SOURCE_SETTING)
                and self.window_source != SOURCE_SETTING
                and (self.context_window is None or window < self.context_window)):
            self.context_window, self.window_source = window, other.window_source
        if other.asked_server and not self.asked_server:
            self.asked_server, self.asked = True, list(other.asked)
        self.tools_rejected = self.tools_rejected or other.tools_rejected
        if other.prefill_rate is not None:
            mine = self.prefill_rate
            self.prefill_rate = other.prefill_rate if mine is None else (mine + other.prefill_rate) / 2

    def as_dict(self) -> dict[str, Any]:
        return {"context_window": self.context_window, "window_source": self.window_source,
                "tools_rejected": self.tools_rejected,
                "prefill_rate": None if self.prefill_rate is None else round(self.prefill_rate, 1)}
