"""Limits: every budget of the Solver Agent in one place (requests, attempts, tokens, time, sizes)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from datasolver.agent.errors import LimitsError
from datasolver.data.schema_formats import SCHEMA_FORMATS, SchemaFormat
from datasolver.settings import amount, check_settings, choice, count, seconds, switch


STALL_ROUNDS = 2  # `datasolver run`'s stall_rounds (issue 46: a hard task ends when it stops improving)
WINDOW_MARGIN_SHARE = 20  # 5% of a known window is kept free for the token estimate's error


@dataclass(frozen=True)
class Limits:
    """Budgets for one task. Frozen, so one instance can be shared as a default.

    Token counts are estimates (see ``datasolver.agent.tokens``). The task's deadline is not a
    budget of the agent but a fact of the run: it travels on the `TaskRun` (`Deadline`).
    """

    max_requests_per_attempt: int = count(80, "model requests per attempt (a context-length retry counts)")
    max_attempts: int = count(5, "attempts before the fallback")
    context_token_budget: int = count(
        48_000, "estimated tokens before older turns are compacted; with a known context window, the window "
        "less the reply's room when that is lower")
    tool_timeout_s: float = seconds(
        120, "seconds per tool call (fractions allowed); also caps the `timeout` a call asks for (a solver.py run's); "
        "the fallback's timeout")
    cut_off_retries: int = count(
        2, "replies cut by the output token limit answered with a nudge, per attempt")
    send_backs: int = count(1, "replies with neither a tool call nor an answer sent back, per attempt", least=0)
    context_shrinks: int = count(3, "context-length 400s answered by shrinking the request, per request")
    # The must-submit governor: with this much left and no OK run yet, the model is told to write
    # its final query now.
    reserve_requests: int = count(3, "must-submit: requests left in the attempt when the model is told to submit")
    reserve_seconds: int = count(90, "must-submit: seconds left to the deadline when the model is told to submit")
    task_token_budget: int | None = count(
        None, "prompt + completion tokens of the whole task (`datasolver run --task-token-budget`); None: no cap",
        optional=True)
    # A small model's prose plan costs minutes on a CPU server; a cut reply lifts the cap for the rest
    # of the attempt.
    tool_reply_tokens: int | None = count(
        512, "`max_tokens` of a reply while a tool call is expected (nothing submitted yet), once the model has "
        "shown it does not think; None: no cap (`--tool-reply-tokens 0`)", optional=True)
    attempt_temperature_step: float = amount(
        0.3, "temperature added per attempt from attempt 2 (`--attempt-temperature-step`)", least=0)
    max_temperature: float = amount(1.0, "the rise stops here", least=0)
    stall_rounds: int = count(
        0, "rounds in a row without progress (no new query with rows, no answer check newly passed, no other new "
        "successful call) that end the attempts and publish the best candidate by the checks; 0: never (`datasolver "
        f"run` gives {STALL_ROUNDS} with the direct answer)", least=0)
    tool_result_chars: int = count(12_000, "one tool result in the history; longer ones are clipped")
    findings_chars: int = count(8_000, "the compacted summary of older turns")
    profile_max_rows: int = count(500_000, "larger tables are listed without a profile (no load)")
    profile_chars: int = count(30_000, "profiles beyond this get the one-line listing instead")
    schema_format: SchemaFormat = choice(
        "profile", "how a table shown in full is written in the first prompt: `profile` (types, counts, ranges, an "
        "example), `create_table` (a CREATE TABLE statement, up to 3 sample values per column), `mschema` "
        "(XiYan-SQL's M-Schema) (`--schema-format`)", SCHEMA_FORMATS)
    tree_max_lines: int = count(120, "the directory tree in the first prompt")
    prompt_budget: int = count(
        10_000, "estimated tokens of the first user message; above it the least relevant tables fold to one "
        "line each (sized for a 32k-token window)")
    vision: bool = switch(False, "send keyframes as image parts (`--vision`, `MODEL_VISION=1`)")
    vision_images: int = count(8, "at most this many keyframes per task as images (`--vision-images`, "
                               "`MODEL_VISION_IMAGES`)")
    vision_max_side: int = count(1280, "long side of each image sent, pixels")
    video_judges: int = count(3, "\"does the video show the answer\" calls for a task with a video "
                              "(`--video-judges`); 0: no judge", least=0)
    direct_answer: bool = switch(
        False, "start with one direct answer query (a ```sql block, tool calls off) before the tool loop; it is "
        "published when it passes the answer checks (`datasolver run` turns it on; `--no-direct-answer`)")
    direct_samples: int = count(
        3, "when the direct query fails: further queries sampled from the same prompt while time allows; "
        "execution chooses among them", least=0)
    direct_temperature: float = amount(0.7, "the temperature of those samples", least=0)
    direct_reply_tokens: int = count(400, "`max_tokens` of a direct answer reply")
    hold_flagged: bool = switch(
        False, "an answer whose answer checks still fail (after the send-back) is not published while attempts "
        "and time remain: the next attempt tries again, and at the end the answer with the fewest failed checks is "
        "published (`datasolver run` turns it on with `--direct-answer`)")
    hold_seconds: int = count(60, "with hold_flagged: an attempt starts again only with more seconds than this left")
    answer_checks: bool = switch(
        True, "an OK run of solver.py gets the answer checks (`CHECK <name>: …` lines); off only to measure what "
        "they bring (`benchmarks/answer_checks.py`)")
    def __post_init__(self) -> None:
        check_settings(self, LimitsError)

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


@dataclass(frozen=True)
class Deadline:
    """When one solve of a task must end: ``at`` is an absolute ``clock()`` value (``time.monotonic()``
    unless a test injects a clock of its own instead of waiting); None: no deadline. Past it no new
    request or attempt starts, an in-flight request is cancelled, and only the fallback run of
    solver.py still happens. Set once, by the pipeline, on the run (`TaskRun.deadline`)."""

    at: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (negative when past), or None without a deadline."""
        return None if self.at is None else self.at - self.clock()

    def expired(self) -> bool:
        """True once the deadline has passed."""
        left = self.seconds_left()
        return left is not None and left <= 0

    def share(self, parts: int) -> Deadline:
        """A deadline for the first of ``parts`` solves that share the time left equally (the votes')."""
        left = self.seconds_left()
        return self if left is None else Deadline(self.clock() + left / max(parts, 1), self.clock)


NO_DEADLINE = Deadline()
