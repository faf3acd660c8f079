"""The llm error tree. Callers catch at any level: LLMError → status / connection → timeout."""

from __future__ import annotations

from datasolver.errors import DatasolverError
from datasolver.settings import SettingsError

from typing import Any


class LLMError(DatasolverError):
    """Base class of every error raised by the llm room."""

    #: How many retries were spent before this error was raised (set by the client).
    retries_taken: int = 0


class LLMConfigError(LLMError, SettingsError):
    """Settings are missing or invalid (no endpoint URL, no model name, a negative timeout)."""


class LLMStatusError(LLMError):
    """The endpoint answered with an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.headers = dict(headers or {})


class LLMBadRequestError(LLMStatusError):
    """400/422: the request itself is wrong; retrying the same request cannot help."""


class LLMContextLengthError(LLMBadRequestError):
    """The prompt exceeds the model's context window; compact the history and try again."""

    #: What the error stated (a ``window.ContextLimit``: the window and the tokens requested), when
    #: it stated numbers; set by the client.
    limit: Any = None


class LLMAuthError(LLMStatusError):
    """401/403: the key is missing or rejected."""


class LLMRateLimitError(LLMStatusError):
    """429: the endpoint asks us to slow down (Retry-After is honoured)."""


class LLMServerError(LLMStatusError):
    """5xx: the endpoint failed; usually transient."""


class LLMConnectionError(LLMError):
    """The endpoint could not be reached or dropped the connection."""


class LLMTimeoutError(LLMConnectionError):
    """Connecting or reading the response took longer than the configured timeout."""

    #: True when no connection was made within the connect timeout (the host is not answering),
    #: False when the server took the request and did not answer in time.
    connecting: bool = False


class EndpointUnusable(LLMError):
    """The endpoint cannot serve a run: unreachable, key refused, model unknown, or not OpenAI-compatible."""

    #: What to fix: ``base_url``, ``api_key`` or ``model``.
    setting: str

    def __init__(self, message: str, *, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


class LLMResponseError(LLMError):
    """The endpoint answered 200 but the body is not a usable chat completion (garbage, no choices)."""
