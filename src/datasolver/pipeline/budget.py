"""The global time budget: how much time a task may take when it starts, and in which mode.

Modes: "full" (the agent's normal limits), "fast" (the budget runs short: one attempt, fewer
requests, a deadline of the task's fair share of what is left), "fallback_only" (the budget is
spent: prepare and the fallback run only, no model request). Every task gets at least the
fallback run, so the batch can overrun the budget by a few seconds per remaining task.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from datasolver.pipeline.config import MIN_LLM_SECONDS

Mode = Literal["full", "fast", "fallback_only"]


@dataclass(frozen=True)
class TaskPlan:
    """How one task runs: its mode, absolute deadline (time.monotonic()) and why."""

    mode: Mode
    deadline: float
    reason: str | None = None


class TimeBudget:
    """Plans each task as it starts, from the time left and the durations seen so far.

    The estimate of a task's duration is the mean of the tasks finished so far (before any has
    finished, tasks run in full mode: the per-task deadline bounds them anyway). When the tasks
    still waiting, spread over the workers, would need more than the time left, they go fast.
    """

    def __init__(
        self,
        total_s: float | None,
        *,
        workers: int,
        task_timeout_s: float,
        min_llm_s: float = MIN_LLM_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_s = total_s
        self.workers = workers
        self.task_timeout_s = task_timeout_s
        self.min_llm_s = min_llm_s
        self._clock = clock
        self.started = clock()
        self._durations: list[float] = []

    @property
    def end(self) -> float | None:
        """Absolute end of the budget, or None without one."""
        return None if self.total_s is None else self.started + self.total_s

    def remaining(self) -> float | None:
        """Seconds left, or None without a budget."""
        return None if self.end is None else self.end - self._clock()

    def record(self, seconds: float) -> None:
        """A finished task's duration (feeds the estimate)."""
        self._durations.append(seconds)

    def estimate(self) -> float | None:
        """Mean duration of the tasks finished so far."""
        return statistics.fmean(self._durations) if self._durations else None

    def plan(self, waiting: int) -> TaskPlan:
        """Plan the task starting now; `waiting` counts the tasks not yet started, this one included."""
        now = self._clock()
        deadline = now + self.task_timeout_s
        end = self.end
        if end is None:
            return TaskPlan("full", deadline)
        left = end - now
        if left < self.min_llm_s:
            return TaskPlan("fallback_only", now, f"time budget spent ({max(left, 0):.0f}s left)")
        deadline = min(deadline, end)
        waves = math.ceil(max(waiting, 1) / self.workers)
        estimate = self.estimate()
        if estimate is None or waves * estimate <= left:
            return TaskPlan("full", deadline)
        share = max(left / waves, self.min_llm_s)
        return TaskPlan(
            "fast", min(deadline, now + share),
            f"time budget short: {waiting} task(s) waiting × ~{estimate:.0f}s each over "
            f"{self.workers} worker(s) > {left:.0f}s left",
        )
