"""The must-submit governor and the repeated-error rule: two ways an attempt can run out
without an answer, each caught before it happens.

- Near the end of the request budget or the task deadline (the last `reserve_requests` requests
  or `reserve_seconds` seconds), a model that has no OK run yet is told once to write its final
  query now.
- The same tool error twice in a row gets a note naming the repetition and what to change; three
  in a row end the attempt.
"""

from __future__ import annotations

from dataclasses import dataclass

from datasolver.agent.limits import Limits

REPEATS_TO_WARN = 2
REPEATS_TO_STOP = 3

_WHAT_TO_CHANGE = {
    "unknown_tool": "call one of the tools named in the error",
    "bad_arguments": "send the arguments as one valid JSON object with the fields the error names",
    "timeout": "make the query cheaper (filter early, aggregate before joining) or try another query",
    "crash": "try a different call",
}


RESERVE_SHARE = 0.25  # the time reserve is at most this share of the task's time


def must_submit_reason(
    limits: Limits, requests: int, seconds_left: float | None, task_seconds: float | None = None
) -> str | None:
    """Why the model should submit now (the reserve of requests or seconds is reached), or None.

    The time reserve is `limits.reserve_seconds`, but at most RESERVE_SHARE of `task_seconds`
    (the time the task had when solving started), so a short task is not told at once.
    """
    left = limits.max_requests_per_attempt - requests
    if left <= limits.reserve_requests:
        return f"only {left} model request(s) left in this attempt"
    reserve = float(limits.reserve_seconds)
    if task_seconds is not None:
        reserve = min(reserve, RESERVE_SHARE * task_seconds)
    if seconds_left is not None and seconds_left <= reserve:
        return f"about {max(int(seconds_left), 0)} s left before the task's deadline"
    return None


@dataclass
class ErrorStreak:
    """Consecutive identical tool errors (same text); a success or another error resets it."""

    text: str | None = None
    count: int = 0

    def see(self, ok: bool, text: str) -> int:
        """Record one tool outcome; return how many times in a row this error text has come."""
        if ok:
            self.text, self.count = None, 0
            return 0
        if text == self.text:
            self.count += 1
        else:
            self.text, self.count = text, 1
        return self.count


def repetition_note(kind: str, tool_hint: str, count: int) -> str:
    """The note appended to a tool result that repeats the previous error word for word
    (``tool_hint``: what to change for this tool, the outcome's `on_repeat`)."""
    change = _WHAT_TO_CHANGE.get(kind) or tool_hint or "change the call"
    ending = ("A third identical error ends this attempt." if count < REPEATS_TO_STOP
              else "This attempt ends now.")
    return (f"\n(note: this is the same error as your previous {count - 1} call(s), word for word: "
            f"repeating the call will not help. Instead, {change}. {ending})")
