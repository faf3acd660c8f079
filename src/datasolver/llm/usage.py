"""Usage accounting: requests and tokens per task, mergeable into per-run totals."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Usage:
    """Counters for one task (or one call, or a whole run after merging).

    ``requests`` counts every HTTP request sent, whatever its outcome; ``retries`` how many of
    them re-sent an earlier one; ``failed`` how many got no usable answer (an error status, a
    dropped connection, a timeout, a body that is not a completion); ``cancelled`` how many the
    caller abandoned in flight (a deadline). Tokens come from answered requests only.

    Updates take a lock, so one instance may be shared by threads or by many coroutines.
    """

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    failed: int = 0
    cancelled: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(
        self, prompt_tokens: int = 0, completion_tokens: int = 0, *, requests: int = 1, retries: int = 0,
        failed: int = 0, cancelled: int = 0,
    ) -> None:
        """Count one request (by default) and its tokens."""
        with self._lock:
            self.requests += requests
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self.retries += retries
            self.failed += failed
            self.cancelled += cancelled

    def merge(self, other: Usage) -> Usage:
        """Add another Usage into this one (e.g. a task's totals into the run's); returns self."""
        snapshot = other.as_dict()
        self.add(
            snapshot["prompt_tokens"],
            snapshot["completion_tokens"],
            requests=snapshot["requests"],
            retries=snapshot["retries"],
            failed=snapshot["failed"],
            cancelled=snapshot["cancelled"],
        )
        return self

    def since(self, before: dict[str, int]) -> dict[str, int]:
        """What was used after the snapshot ``before`` (an earlier ``as_dict()``): one task's or one
        question's share of a client's usage that earlier stages also counted."""
        return {k: v - before.get(k, 0) for k, v in self.as_dict().items()}

    def as_dict(self) -> dict[str, int]:
        """A consistent snapshot, ready for JSON."""
        with self._lock:
            return {
                "requests": self.requests,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens,
                "retries": self.retries,
                "failed": self.failed,
                "cancelled": self.cancelled,
            }
