"""Limits: every budget of the Solver Agent in one place (requests, attempts, tokens, time, sizes)."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

from datasolver.agent.errors import LimitsError


@dataclass(frozen=True)
class Limits:
    """Budgets for one task. Frozen, so one instance can be shared as a default.

    Token counts are estimates (see ``datasolver.agent.tokens``); ``deadline`` is an absolute
    ``time.monotonic()`` value for the whole task: past it no new request or attempt starts, an
    in-flight request is cancelled, and only the fallback run of solver.py still happens.
    """

    max_requests_per_attempt: int = 80
    max_attempts: int = 5
    context_token_budget: int = 48_000  # compact older turns above this estimate
    tool_timeout_s: float = 120  # per tool call (fractions allowed); run_solver's own timeout is capped to it
    cut_off_retries: int = 2  # replies cut by the output token limit answered with a nudge, per attempt
    deadline: float | None = None
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

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("deadline", "vision") or (f.name == "video_judges" and value == 0):
                continue
            if f.name == "tool_timeout_s":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                    raise LimitsError(f"Limits.tool_timeout_s must be a number of seconds > 0, got {value!r}")
                continue
            if not isinstance(value, int) or value < 1:
                raise LimitsError(f"Limits.{f.name} must be a positive integer, got {value!r}")

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (negative when past), or None without a deadline."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def expired(self) -> bool:
        """True once the deadline has passed."""
        left = self.seconds_left()
        return left is not None and left <= 0
