"""The time budget's plan for each task, with a fake clock; and the agent limits it implies."""

from __future__ import annotations

import pytest

from datasolver.agent import Limits
from datasolver.pipeline.budget import TaskPlan, TimeBudget
from datasolver.pipeline.task import task_limits

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def budget(total, *, workers=4, timeout=300.0, done=(), elapsed=0.0):
    clock = Clock()
    b = TimeBudget(total, workers=workers, task_timeout_s=timeout, min_llm_s=20.0, clock=clock)
    for seconds in done:
        b.record(seconds)
    clock.now += elapsed
    return b, clock


@pytest.mark.parametrize(
    ("total", "done", "elapsed", "waiting", "mode", "deadline_in"),
    [
        (None, (), 0, 100, "full", 300),  # no budget: the task timeout only
        (3600, (), 0, 100, "full", 300),  # nothing measured yet: full
        (3600, (60, 60), 0, 100, "full", 300),  # 25 waves × 60 s = 1500 s ≤ 3600 s
        (3600, (200, 200), 0, 100, "fast", 144),  # 25 × 200 > 3600: share 3600/25
        (3600, (200,), 3500, 8, "fast", 50),  # 100 s left for 2 waves
        (3600, (200,), 3570, 1, "fast", 30),  # deadline never past the budget's end
        (3600, (200,), 3585, 1, "fallback_only", 0),  # under 20 s left: no model request
        (3600, (10,), 3400, 4, "full", 200),  # the budget's end cuts the task timeout
    ],
)
def test_plan(total, done, elapsed, waiting, mode, deadline_in):
    b, clock = budget(total, done=done, elapsed=elapsed)
    plan = b.plan(waiting)
    assert plan.mode == mode
    assert plan.deadline - clock.now == pytest.approx(deadline_in)
    assert (plan.reason is None) == (mode == "full")


def test_the_fast_share_never_drops_below_the_minimum():
    b, clock = budget(3600, done=(500,), elapsed=3000)
    plan = b.plan(400)  # 100 waves for 600 s: 6 s each, raised to the 20 s minimum
    assert plan.mode == "fast" and plan.deadline - clock.now == pytest.approx(20)


def test_estimate_is_the_mean_of_finished_tasks():
    b, _ = budget(3600, done=(10, 20, 60))
    assert b.estimate() == 30
    assert b.remaining() == 3600


def test_full_plan_keeps_the_agent_limits():
    limits = task_limits(Limits(max_attempts=4, max_requests_per_attempt=50), "full")
    assert (limits.max_attempts, limits.max_requests_per_attempt) == (4, 50)


def test_fast_plan_cuts_attempts_and_requests():
    limits = task_limits(None, "fast")
    assert (limits.max_attempts, limits.max_requests_per_attempt) == (1, 30)
    assert limits.context_token_budget == Limits().context_token_budget
