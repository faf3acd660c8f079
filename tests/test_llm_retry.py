"""Retry policy tables: which errors are retried, how long we wait, how Retry-After is read."""

from __future__ import annotations

from email.utils import formatdate

import pytest

from datasolver.llm.constants import INITIAL_BACKOFF_S, JITTER_FRACTION, MAX_BACKOFF_S, RETRY_AFTER_CAP_S
from datasolver.llm.errors import (
    LLMBadRequestError,
    LLMConnectionError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMServerError,
    LLMStatusError,
    LLMTimeoutError,
)
from datasolver.llm.retry import parse_retry_after, retry_delay, should_retry

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _status(code: int, cls: type[LLMStatusError] = LLMStatusError, **headers: str) -> LLMStatusError:
    return cls(f"HTTP {code}", status_code=code, headers=headers)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (LLMTimeoutError("slow"), "timeout"),
        (LLMConnectionError("refused"), "connection error"),
        (LLMResponseError("garbage"), "invalid response body"),
        (_status(429, LLMRateLimitError), "HTTP 429"),
        (_status(408), "HTTP 408"),
        (_status(409), "HTTP 409"),
        (_status(500, LLMServerError), "HTTP 500"),
        (_status(503, LLMServerError), "HTTP 503"),
        (_status(400, LLMBadRequestError), None),
        (_status(401), None),
        (_status(404), None),
        (_status(400, **{"x-should-retry": "true"}), "HTTP 400 (x-should-retry: true)"),
        (_status(503, **{"X-Should-Retry": "false"}), None),
        (LLMError("generic"), None),
    ],
)
def test_should_retry(error: LLMError, reason: str | None) -> None:
    assert should_retry(error) == reason


@pytest.mark.parametrize(
    ("retries_taken", "retry_after", "rand", "expected"),
    [
        (0, None, 0.0, INITIAL_BACKOFF_S),  # first retry, no jitter
        (1, None, 0.0, INITIAL_BACKOFF_S * 2),
        (2, None, 0.0, INITIAL_BACKOFF_S * 4),
        (10, None, 0.0, MAX_BACKOFF_S),  # exponential growth is capped
        (0, None, 1.0, INITIAL_BACKOFF_S * (1 - JITTER_FRACTION)),  # full jitter scales down
        (3, 2.5, 0.7, 2.5),  # Retry-After wins over backoff and jitter
        (0, 0.0, 0.5, 0.0),
        (0, 10_000.0, 0.0, RETRY_AFTER_CAP_S),  # an absurd Retry-After is capped
    ],
)
def test_retry_delay(retries_taken: int, retry_after: float | None, rand: float, expected: float) -> None:
    assert retry_delay(retries_taken, retry_after, rand=rand) == pytest.approx(expected)


def test_retry_delay_jitter_stays_within_bounds() -> None:
    for _ in range(200):
        d = retry_delay(1, None)
        assert INITIAL_BACKOFF_S * 2 * (1 - JITTER_FRACTION) <= d <= INITIAL_BACKOFF_S * 2


NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # ms is more precise, wins
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": formatdate(NOW + 7, usegmt=True)}, 7.0),
        ({"retry-after": formatdate(NOW - 60, usegmt=True)}, 0.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    got = parse_retry_after(headers, now=NOW)
    assert got == (None if expected is None else pytest.approx(expected))
