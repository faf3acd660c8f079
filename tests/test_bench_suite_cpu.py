"""benchmarks/suite_cpu.py's bookkeeping (the benchmark runs the whole suite, so it is not run
here): records written per process, and the summary's arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.benchscripts import load_benchmark


def test_records_go_to_the_folder_named_in_the_environment_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = load_benchmark("suite_cpu")
    monkeypatch.delenv("DATASOLVER_SUITE_CPU_DIR", raising=False)
    bench.record({"test": "ignored"})  # no folder named: nothing is written anywhere
    monkeypatch.setenv("DATASOLVER_SUITE_CPU_DIR", str(tmp_path))
    bench.record({"test": "a::b", "own": 1.0, "children": 0.0, "wall": 1.0})
    [written] = list(tmp_path.glob("*.jsonl"))
    assert [json.loads(line) for line in written.read_text().splitlines()] == [
        {"test": "a::b", "own": 1.0, "children": 0.0, "wall": 1.0}]


def test_the_summary_splits_cpu_into_tests_outside_tests_and_not_reaped() -> None:
    bench = load_benchmark("suite_cpu")
    records = [
        {"test": "tests/test_a.py::one", "own": 1.0, "children": 2.0, "wall": 3.0},
        {"test": "tests/test_a.py::two", "own": 0.5, "children": 0.0, "wall": 0.5},
        {"test": "tests/test_b.py::one", "own": 4.0, "children": 0.0, "wall": 4.0},
        {"test": bench.SESSION_END + "::gw0", "own": 0.0, "children": 0.5, "wall": 0.0},
        {"process": "gw0", "own": 6.0, "children": 3.0},
        {"process": "controller", "own": 1.0, "children": 9.0},  # the workers are its children
    ]
    summary = bench.summarize(records, machine_s=12.0, wall_s=9.0)
    assert summary["tests"] == 3
    assert list(summary["files"]) == ["tests/test_b.py", "tests/test_a.py"]  # most CPU first, tests only
    assert summary["files"]["tests/test_a.py"] == {"own": 1.5, "children": 2.0, "wall": 3.5, "tests": 2}
    assert summary["in_tests_cpu_s"] == 7.5
    assert summary["pytest_processes_cpu_s"] == 10.0  # the controller's count holds its workers'
    assert summary["session_fixtures_end_cpu_s"] == 0.5
    assert summary["outside_any_test_cpu_s"] == 2.0 and summary["not_reaped_by_a_worker_cpu_s"] == 2.0
    assert summary["top_tests"][0]["test"] == "tests/test_b.py::one"
