"""LLMSettings: plain, frozen data describing one endpoint and its call policy."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from . import constants as C
from .errors import LLMConfigError


@dataclass(frozen=True)
class LLMSettings:
    """Endpoint, model and call policy. The key is kept out of ``repr`` so it never lands in logs."""

    base_url: str
    api_key: str | None = field(repr=False)
    model: str
    connect_timeout: float = C.DEFAULT_CONNECT_TIMEOUT_S
    read_timeout: float = C.DEFAULT_READ_TIMEOUT_S
    max_retries: int = C.DEFAULT_MAX_RETRIES
    temperature: float = C.DEFAULT_TEMPERATURE
    enable_thinking: bool | None = None
    initial_backoff: float = C.INITIAL_BACKOFF_S
    max_backoff: float = C.MAX_BACKOFF_S
    retry_after_cap: float = C.RETRY_AFTER_CAP_S
    transport: Callable[[str | None], httpx.AsyncBaseTransport] | None = field(
        default=None, repr=False, compare=False)
    """None: the network. Else a factory of an httpx transport per task id (the trace's) that answers
    every request in-process: `datasolver replay` answers from recorded traces this way."""
    tool_mode: str = C.DEFAULT_TOOL_MODE
    max_tokens: int | None = C.DEFAULT_MAX_TOKENS  # None: let the server decide
    context_window: int | None = None  # tokens; None: ask the server, else learn from a 400

    def __post_init__(self) -> None:
        if not self.base_url:
            raise LLMConfigError(f"No model endpoint URL: set {C.ENV_API_URL} or pass base_url=...")
        if not self.model:
            raise LLMConfigError(f"No model name: set {C.ENV_MODEL} or pass model=...")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        for name in ("connect_timeout", "read_timeout"):
            if getattr(self, name) <= 0:
                raise LLMConfigError(f"{name} must be > 0 seconds, got {getattr(self, name)!r}")
        for name in ("initial_backoff", "max_backoff", "retry_after_cap"):
            if getattr(self, name) < 0:
                raise LLMConfigError(f"{name} must be >= 0 seconds, got {getattr(self, name)!r}")
        if self.tool_mode not in C.TOOL_MODES:
            raise LLMConfigError(f"tool_mode must be one of {', '.join(C.TOOL_MODES)}, got {self.tool_mode!r}")
        for name in ("max_tokens", "context_window"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise LLMConfigError(f"{name} must be a positive integer, got {value!r}")
        if self.max_retries < 0:
            raise LLMConfigError(f"max_retries must be >= 0, got {self.max_retries!r}")

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMSettings:
        """Read MODEL_API_URL / MODEL_API_KEY / MODEL_NAME / MODEL_CONTEXT_WINDOW; explicit non-None
        overrides win.

        ``None`` overrides mean "not given", so a CLI can pass its optional flags straight through.
        """
        key_file = os.environ.get(C.ENV_API_KEY_FILE)
        values: dict[str, Any] = {
            "base_url": os.environ.get(C.ENV_API_URL, ""),
            "api_key": os.environ.get(C.ENV_API_KEY) or (read_key_file(key_file) if key_file else None),
            "model": os.environ.get(C.ENV_MODEL, ""),
        }
        window = os.environ.get(C.ENV_CONTEXT_WINDOW, "").strip()
        if window:
            try:
                values["context_window"] = int(window)
            except ValueError:
                raise LLMConfigError(f"{C.ENV_CONTEXT_WINDOW} must be a number of tokens, got {window!r}") from None
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
    return _USERINFO.sub(rf"\1{C.SCRUBBED}@", text)


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
