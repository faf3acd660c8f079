"""The retry policy: which failures to retry, and how long to wait before the next try."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from .constants import (
    INITIAL_BACKOFF_S,
    JITTER_FRACTION,
    MAX_BACKOFF_S,
    RETRYABLE_STATUS,
    RETRY_AFTER_CAP_S,
    SERVER_ERROR_MIN_STATUS,
)
from .errors import (
    LLMConnectionError,
    LLMError,
    LLMResponseError,
    LLMStatusError,
    LLMTimeoutError,
)


def should_retry(error: LLMError) -> str | None:
    """The reason to retry ``error`` (written to the trace), or None when retrying cannot help."""
    if isinstance(error, LLMTimeoutError):
        return "timeout"
    if isinstance(error, LLMConnectionError):
        return "connection error"
    if isinstance(error, LLMResponseError):
        return "invalid response body"
    if isinstance(error, LLMStatusError):
        # Servers may say explicitly (OpenAI's convention); that beats our status table.
        hint = {k.lower(): v for k, v in error.headers.items()}.get("x-should-retry", "").lower()
        if hint == "true":
            return f"HTTP {error.status_code} (x-should-retry: true)"
        if hint == "false":
            return None
        if error.status_code in RETRYABLE_STATUS or error.status_code >= SERVER_ERROR_MIN_STATUS:
            return f"HTTP {error.status_code}"
    return None


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, or ``retry-after`` as seconds or an
    HTTP date. None when absent or unparseable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = lowered.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) / divisor)
        except ValueError:
            pass
        if name == "retry-after":
            try:
                when = parsedate_to_datetime(raw).timestamp()
            except (TypeError, ValueError):
                return None
            return max(0.0, when - (time.time() if now is None else now))
    return None


def retry_delay(
    retries_taken: int,
    retry_after: float | None,
    *,
    initial_backoff: float = INITIAL_BACKOFF_S,
    max_backoff: float = MAX_BACKOFF_S,
    retry_after_cap: float = RETRY_AFTER_CAP_S,
    jitter: float = JITTER_FRACTION,
    rand: float | None = None,
) -> float:
    """Seconds to wait before retry number ``retries_taken + 1``.

    A server-given Retry-After wins (capped, so one bad header cannot stall a task for an hour);
    otherwise exponential backoff, capped, scaled down by up to ``jitter``. ``rand`` in [0, 1)
    makes the jitter deterministic for tests.
    """
    if retry_after is not None:
        return min(retry_after, retry_after_cap)
    base = min(initial_backoff * (2.0**retries_taken), max_backoff)
    r = random.random() if rand is None else rand
    return base * (1.0 - jitter * r)
