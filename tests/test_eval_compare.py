"""Run comparison: fixed/broken/still failing, seed consistency, paired bootstrap."""

from __future__ import annotations

import pytest

from datasolver.eval import compare_scores, paired_bootstrap, summarize_seeds

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_compare_scores() -> None:
    baseline = {"a": 1.0, "b": 0.0, "c": 1.0, "d": 0.5, "e": 1.0, "old": 1.0}
    current = {"a": 1.0, "b": 1.0, "c": 0.45, "d": 0.7, "e": 1.0, "new": 0.0}
    result = compare_scores(baseline, current)
    assert result.fixed == [("b", 0.0, 1.0)]
    assert result.broken == [("c", 1.0, 0.45)]
    assert result.still_failing == [("d", 0.5, 0.7)]
    assert (result.only_baseline, result.only_current) == (["old"], ["new"])
    assert result.delta == pytest.approx((0.45 + 0.7 + 3) / 5 - 3.5 / 5)


def test_summarize_seeds() -> None:
    runs = [{"a": 1.0, "b": 0.0, "c": 1.0}, {"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1.0, "b": 0.5, "c": 1.0, "x": 1.0}]
    summary = summarize_seeds(runs)
    assert summary.run_means == pytest.approx([2 / 3, 1.0, 2.5 / 3])
    assert summary.mean == pytest.approx((2 / 3 + 1 + 2.5 / 3) / 3)
    assert summary.stdev > 0
    assert summary.flaky == ["b"] and summary.tasks["b"].solved_runs == 1
    assert summary.consistency == pytest.approx(2 / 3)
    assert summary.partial_tasks == ["x"]
    assert summary.task_means()["b"] == pytest.approx(0.5)


def test_single_run_has_no_spread() -> None:
    summary = summarize_seeds([{"a": 1.0}])
    assert (summary.stdev, summary.consistency) == (0.0, 1.0)


def test_bootstrap_constant_difference_has_a_point_interval() -> None:
    base = [{f"t{i}": 0.5 for i in range(20)}]
    cur = [{f"t{i}": 0.75 for i in range(20)}]
    interval = paired_bootstrap(base, cur, resamples=500)
    assert (interval.difference, interval.low, interval.high) == pytest.approx((0.25, 0.25, 0.25))
    assert interval.excludes_zero and interval.share_not_better == 0.0


def test_bootstrap_is_paired_and_reproducible() -> None:
    # Tasks vary a lot in difficulty but the new system is +0.1 on each: pairing keeps the
    # interval tight even though the per-system means are noisy.
    base = [{f"t{i}": (i % 10) / 10 for i in range(50)}]
    cur = [{f"t{i}": (i % 10) / 10 + 0.1 for i in range(50)}]
    first = paired_bootstrap(base, cur, resamples=1000, seed=3)
    assert first == paired_bootstrap(base, cur, resamples=1000, seed=3)
    assert first.low == pytest.approx(0.1) and first.high == pytest.approx(0.1)


def test_bootstrap_no_difference_includes_zero() -> None:
    base = [{f"t{i}": float(i % 2) for i in range(40)}]
    cur = [{f"t{i}": float((i + 1) % 2) for i in range(40)}]  # half fixed, half broken
    interval = paired_bootstrap(base, cur, resamples=2000)
    assert interval.difference == 0.0
    assert interval.low < 0 < interval.high and not interval.excludes_zero


def test_bootstrap_averages_seeds_per_task() -> None:
    base = [{"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 1.0}]
    cur = [{"a": 1.0, "b": 1.0}]
    interval = paired_bootstrap(base, cur, resamples=200)
    assert interval.difference == pytest.approx(0.25) and interval.tasks == 2


def test_bootstrap_needs_common_tasks() -> None:
    with pytest.raises(ValueError, match="no scored task"):
        paired_bootstrap([{"a": 1.0}], [{"b": 1.0}])
