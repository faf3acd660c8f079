"""Limits: every budget of the Solver Agent in one place (requests, attempts, tokens, time, sizes)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from datasolver.agent.errors import LimitsError


_OPTIONAL = frozenset({"deadline", "clock"})
WINDOW_MARGIN_SHARE = 20  # 5% of a known window is kept free for the token estimate's error
_NULLABLE = frozenset({"task_token_budget", "tool_reply_tokens"})
_NON_NEGATIVE = frozenset({"send_backs"})
_FLOATS = frozenset({"attempt_temperature_step", "max_temperature"})


@dataclass(frozen=True)
class Limits:
    """Budgets for one task. Frozen, so one instance can be shared as a default.

    Token counts are estimates (see ``datasolver.agent.tokens``); ``deadline`` is an absolute
    ``clock()`` value (``time.monotonic()`` unless a test injects another clock) for the whole
    task: past it no new request or attempt starts, an in-flight request is cancelled, and only
    the fallback run of solver.py still happens.
    """

    max_requests_per_attempt: int = 80
    max_attempts: int = 5
    # Compact older turns above this estimate; with a known context window the threshold is the
    # window less a reserve for the reply, when that is lower.
    context_token_budget: int = 48_000
    tool_timeout_s: float = 120  # per tool call (fractions allowed); run_solver's own timeout is capped to it
    cut_off_retries: int = 2  # replies cut by the output token limit answered with a nudge, per attempt
    send_backs: int = 1  # replies with neither a tool call nor an answer sent back, per attempt
    context_shrinks: int = 3  # context-length 400s answered by shrinking the request, per request
    # Must-submit governor: with this many requests (of the attempt) or seconds (to the deadline)
    # left and no OK run yet, the model is told to write its final query now.
    reserve_requests: int = 3
    reserve_seconds: int = 90
    deadline: float | None = None
    task_token_budget: int | None = None  # prompt + completion tokens of the whole task
    # max_tokens of a reply while a tool call is expected (nothing submitted yet), once the model
    # has shown it does not think (its first reply had no reasoning); None: no cap. A small model's
    # prose plan costs minutes on a CPU server; a cut reply lifts the cap for the rest of the attempt.
    tool_reply_tokens: int | None = 512
    # From attempt 2 on the temperature rises by this step per attempt, up to max_temperature.
    attempt_temperature_step: float = 0.3
    max_temperature: float = 1.0
    # Sizes that keep prompts and history bounded.
    tool_result_chars: int = 12_000  # one tool result in history, longer ones are clipped
    findings_chars: int = 8_000  # the compacted summary of older turns
    profile_max_rows: int = 500_000  # larger tables are listed without a profile (no load)
    profile_chars: int = 30_000  # profiles beyond this get the one-line listing instead
    tree_max_lines: int = 120  # the directory tree in the prompt
    # The first user message (knowledge, files, tables, question), in estimated tokens; above it the
    # least relevant tables are folded to one line each. Sized for a 32k-token context window.
    prompt_budget: int = 10_000
    # Video evidence: keyframes as image parts for vision-capable endpoints, and the answer judge.
    vision: bool = False  # send keyframes as images (--vision / MODEL_VISION=1)
    vision_images: int = 8  # at most this many keyframes per task as images
    vision_max_side: int = 1280  # pixels, long side of each image sent
    video_judges: int = 3  # independent "does the video show the answer" calls; 0: no judge
    # What `deadline` is measured on; tests inject a clock of their own instead of waiting.
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _OPTIONAL or f.name == "vision" or (f.name == "video_judges" and value == 0) or (
                    f.name in _NULLABLE and value is None):
                continue
            if f.name == "tool_timeout_s":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                    raise LimitsError(f"Limits.tool_timeout_s must be a number of seconds > 0, got {value!r}")
                continue
            if f.name in _FLOATS:
                if not isinstance(value, (int, float)) or value < 0:
                    raise LimitsError(f"Limits.{f.name} must be a number >= 0, got {value!r}")
                continue
            least = 0 if f.name in _NON_NEGATIVE else 1
            if not isinstance(value, int) or value < least:
                kind = "an integer >= 0" if least == 0 else "a positive integer"
                raise LimitsError(f"Limits.{f.name} must be {kind}, got {value!r}")

    def temperature_for(self, attempt: int, base: float) -> float:
        """The sampling temperature of an attempt: ``base`` first, then higher each attempt."""
        if attempt <= 1:
            return base
        return round(min(max(base, self.max_temperature), base + self.attempt_temperature_step * (attempt - 1)), 3)

    def compaction_threshold(self, window: int | None, reply_tokens: int | None) -> int:
        """Compact above this many tokens: the budget, or less when a known window needs it
        (the window less the reply's room and a margin for the estimate's error)."""
        if window is None:
            return self.context_token_budget
        reserve = (reply_tokens or 0) + window // WINDOW_MARGIN_SHARE
        return max(window // 4, min(self.context_token_budget, window - reserve))

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (negative when past), or None without a deadline."""
        return None if self.deadline is None else self.deadline - self.clock()

    def expired(self) -> bool:
        """True once the deadline has passed."""
        left = self.seconds_left()
        return left is not None and left <= 0
