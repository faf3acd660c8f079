"""Compare runs: fixed/broken tasks, seed-to-seed consistency, paired bootstrap of a difference.

Runs are plain `task id → score` mappings (EvalReport.scores()), so any source of scores works.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from datasolver.eval.errors import NoSharedTasks

# A task counts as solved at full marks; the tolerance only absorbs float noise.
SOLVED_AT = 1.0 - 1e-9

Scores = Mapping[str, float]


def solved(score: float) -> bool:
    """True for a full-marks task."""
    return score >= SOLVED_AT


@dataclass
class RunComparison:
    """Task-level changes from a baseline run to a current run (tasks in both)."""

    fixed: list[tuple[str, float, float]]  # (task, baseline, current): now solved, was not
    broken: list[tuple[str, float, float]]  # was solved, now not
    still_failing: list[tuple[str, float, float]]  # unsolved in both (scores may still move)
    only_baseline: list[str]
    only_current: list[str]
    baseline_mean: float
    current_mean: float

    @property
    def delta(self) -> float:
        """current mean − baseline mean, over the tasks both runs hold."""
        return self.current_mean - self.baseline_mean


def compare_scores(baseline: Scores, current: Scores) -> RunComparison:
    """Classify every task both runs scored as fixed, broken or still failing."""
    common = sorted(set(baseline) & set(current))
    fixed, broken, failing = [], [], []
    for task in common:
        entry = (task, baseline[task], current[task])
        was, now = solved(baseline[task]), solved(current[task])
        if now and not was:
            fixed.append(entry)
        elif was and not now:
            broken.append(entry)
        elif not was and not now:
            failing.append(entry)
    return RunComparison(
        fixed=fixed,
        broken=broken,
        still_failing=failing,
        only_baseline=sorted(set(baseline) - set(current)),
        only_current=sorted(set(current) - set(baseline)),
        baseline_mean=_mean([baseline[t] for t in common]),
        current_mean=_mean([current[t] for t in common]),
    )


@dataclass
class TaskConsistency:
    """One task across several runs of the same system (seeds)."""

    scores: list[float]

    @property
    def mean(self) -> float:
        """Mean score over the runs."""
        return _mean(self.scores)

    @property
    def solved_runs(self) -> int:
        """In how many runs the task got full marks."""
        return sum(solved(s) for s in self.scores)

    @property
    def consistent(self) -> bool:
        """Solved in every run or in none."""
        return self.solved_runs in (0, len(self.scores))


@dataclass
class SeedSummary:
    """Several runs of one system over one task set."""

    run_means: list[float]
    tasks: dict[str, TaskConsistency]
    partial_tasks: list[str] = field(default_factory=list)  # not scored in every run; left out

    @property
    def mean(self) -> float:
        """Mean of the per-run means (over the tasks every run holds)."""
        return _mean(self.run_means)

    @property
    def stdev(self) -> float:
        """Sample standard deviation of the run means (0 for a single run)."""
        return statistics.stdev(self.run_means) if len(self.run_means) > 1 else 0.0

    @property
    def consistency(self) -> float:
        """Share of tasks solved in every run or in none."""
        return _mean([1.0 if t.consistent else 0.0 for t in self.tasks.values()])

    @property
    def flaky(self) -> list[str]:
        """Tasks solved in some runs but not all."""
        return [task for task, t in self.tasks.items() if not t.consistent]

    def task_means(self) -> dict[str, float]:
        """Task id → mean score over the runs."""
        return {task: t.mean for task, t in self.tasks.items()}


def summarize_seeds(runs: Sequence[Scores]) -> SeedSummary:
    """Mean, spread and per-task consistency of several runs of one system."""
    if not runs:
        raise ValueError("summarize_seeds needs at least one run")
    common = sorted(set.intersection(*(set(run) for run in runs)))
    everywhere = set.union(*(set(run) for run in runs))
    return SeedSummary(
        run_means=[_mean([run[t] for t in common]) for run in runs],
        tasks={t: TaskConsistency([run[t] for run in runs]) for t in common},
        partial_tasks=sorted(everywhere - set(common)),
    )


@dataclass(frozen=True)
class BootstrapInterval:
    """Mean paired difference (current − baseline) over tasks and its bootstrap interval."""

    difference: float
    low: float
    high: float
    confidence: float
    tasks: int
    resamples: int
    share_not_better: float  # fraction of resampled differences <= 0

    @property
    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of 0."""
        return self.low > 0 or self.high < 0


def paired_bootstrap(
    baseline_runs: Sequence[Scores],
    current_runs: Sequence[Scores],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    """Percentile bootstrap over tasks of the mean per-task difference.

    Each side's runs (seeds) are first averaged per task; tasks are then resampled with
    replacement, keeping each task's pair together. Only tasks every run holds are used.
    """
    if resamples < 1 or not 0 < confidence < 1:
        raise ValueError("resamples must be >= 1 and confidence in (0, 1)")
    base = summarize_seeds(baseline_runs).task_means()
    cur = summarize_seeds(current_runs).task_means()
    common = sorted(set(base) & set(cur))
    if not common:
        raise NoSharedTasks("the two systems share no scored task")
    diffs = [cur[t] - base[t] for t in common]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[max(0, math.floor(tail * resamples))]
    high = means[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return BootstrapInterval(
        difference=_mean(diffs),
        low=low,
        high=high,
        confidence=confidence,
        tasks=n,
        resamples=resamples,
        share_not_better=sum(m <= 0 for m in means) / resamples,
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
