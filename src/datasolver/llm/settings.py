"""LLMSettings: plain, frozen data describing one endpoint and its call policy."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from datasolver.settings import (REQUIRED, amount, check_settings, choice, count, sampling_temperature, seconds,
                                setting, switch)

from .constants import (
    DEFAULT_CONNECT_TIMEOUT_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS,
    DEFAULT_READ_TIMEOUT_S,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOOL_MODE,
    ENV_API_KEY,
    ENV_API_KEY_FILE,
    ENV_API_URL,
    ENV_CONTEXT_WINDOW,
    ENV_MODEL,
    INITIAL_BACKOFF_S,
    MAX_BACKOFF_S,
    RETRY_AFTER_CAP_S,
    SCRUBBED,
    TOOL_MODES,
)
from .errors import LLMConfigError


@dataclass(frozen=True)
class LLMSettings:
    """Endpoint, model and call policy. The key is kept out of ``repr`` so it never lands in logs."""

    base_url: str = setting(REQUIRED, "the OpenAI-compatible endpoint (`MODEL_API_URL`), trailing `/` dropped")
    api_key: str | None = setting(REQUIRED, "the bearer key (`MODEL_API_KEY` or `MODEL_API_KEY_FILE`); None: "
                                  "none sent", repr=False)
    model: str = setting(REQUIRED, "the model name sent with each request (`MODEL_NAME`)")
    connect_timeout: float = seconds(DEFAULT_CONNECT_TIMEOUT_S, "seconds to open a connection")
    read_timeout: float = seconds(DEFAULT_READ_TIMEOUT_S, "seconds to wait for a reply")
    max_retries: int = count(DEFAULT_MAX_RETRIES, "retries of a failed request (timeout, lost connection, "
                             "unreadable body, 429, 5xx: llm/retry.py)", least=0)
    temperature: float = sampling_temperature(DEFAULT_TEMPERATURE, "sampling temperature")
    enable_thinking: bool | None = switch(None, "per-request thinking switch for Qwen-style servers; None "
                                          "leaves the server default", optional=True)
    initial_backoff: float = amount(INITIAL_BACKOFF_S, "seconds before the first retry; the wait grows "
                                    "exponentially, with jitter", least=0)
    max_backoff: float = amount(MAX_BACKOFF_S, "the longest wait between retries, seconds", least=0)
    retry_after_cap: float = amount(RETRY_AFTER_CAP_S, "a server's Retry-After is honoured up to this many "
                                    "seconds", least=0)
    transport: Callable[[str | None], httpx.AsyncBaseTransport] | None = setting(
        None, "None: the network; else a factory of an httpx transport per task id (the trace's) that answers "
        "every request in-process (`datasolver replay` answers from recorded traces this way)",
        repr=False, compare=False)
    tool_mode: str = choice(DEFAULT_TOOL_MODE, "how tool calls travel: native `tools`, calls written as "
                            "text, or auto (native, text when the server refuses)", TOOL_MODES)
    max_tokens: int | None = count(DEFAULT_MAX_TOKENS, "`max_tokens` of a reply; None: let the server decide",
                                   optional=True)
    context_window: int | None = count(None, "tokens; None: ask the server, else learn from a 400",
                                       optional=True)

    def __post_init__(self) -> None:
        if not self.base_url:
            raise LLMConfigError(f"No model endpoint URL: set {ENV_API_URL} or pass base_url=...")
        if not self.model:
            raise LLMConfigError(f"No model name: set {ENV_MODEL} or pass model=...")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        check_settings(self, LLMConfigError)

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMSettings:
        """Read MODEL_API_URL / MODEL_API_KEY / MODEL_NAME / MODEL_CONTEXT_WINDOW; explicit non-None
        overrides win.

        ``None`` overrides mean "not given", so a CLI can pass its optional flags straight through.
        """
        key_file = os.environ.get(ENV_API_KEY_FILE)
        values: dict[str, Any] = {
            "base_url": os.environ.get(ENV_API_URL, ""),
            "api_key": os.environ.get(ENV_API_KEY) or (read_key_file(key_file) if key_file else None),
            "model": os.environ.get(ENV_MODEL, ""),
        }
        window = os.environ.get(ENV_CONTEXT_WINDOW, "").strip()
        if window:
            try:
                values["context_window"] = int(window)
            except ValueError:
                raise LLMConfigError(f"{ENV_CONTEXT_WINDOW} must be a number of tokens, got {window!r}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        unknown = set(values) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise LLMConfigError(f"Unknown LLM setting(s): {', '.join(sorted(unknown))}")
        return cls(**values)

    @property
    def display_url(self) -> str:
        """The endpoint as it may be shown or logged: any `user:password@` replaced by `***@`."""
        return redact_url(self.base_url)

    def url_secrets(self) -> list[str]:
        """The credentials inside the endpoint URL, whole and the password alone (to scrub them)."""
        match = _USERINFO.search(self.base_url)
        if not match:
            return []
        userinfo = match.group(2)
        return [userinfo] + ([userinfo.split(":", 1)[1]] if ":" in userinfo else [])

    def replace(self, **changes: Any) -> LLMSettings:
        """A copy with some fields changed (validated again)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise LLMConfigError(f"Unknown LLM setting(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    def setting_names(self) -> frozenset[str]:
        """Names accepted by :meth:`replace` (used to split per-call overrides)."""
        return frozenset(f.name for f in dataclasses.fields(self))


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/\s@]+)@")


def redact_url(text: str) -> str:
    """Every `scheme://user:password@` in `text` becomes `scheme://***@`."""
    return _USERINFO.sub(rf"\1{SCRUBBED}@", text)


def read_key_file(path: str | Path, what: str = "API key") -> str:
    """The secret (`what`: the API key, a bearer token) stored in a file, surrounding whitespace
    dropped; LLMConfigError if unusable."""
    try:
        key = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise LLMConfigError(f"Cannot read the {what} file {path}: {exc}") from exc
    if not key:
        raise LLMConfigError(f"The {what} file {path} is empty")
    return key
