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


def test_the_suites_own_cpu_adds_the_orphans_reaped_by_the_script_and_those_still_running() -> None:
    bench = load_benchmark("suite_cpu")
    records = [{"test": "tests/test_a.py::one", "own": 1.0, "children": 0.0, "wall": 1.0},
               {"process": "controller", "own": 2.0, "children": 3.0}]
    summary = bench.summarize(records, machine_s=100.0, wall_s=9.0, reaped_s=7.5, left_running_s=0.5)
    assert summary["pytest_processes_cpu_s"] == 5.0
    assert summary["suite_cpu_s"] == 8.0 and summary["orphans_cpu_s"] == 3.0  # 7.5 - 5.0 + 0.5
    assert bench.summarize(records, machine_s=100.0, wall_s=9.0)["suite_cpu_s"] is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the subreaper is Linux only")
def test_a_daemon_whose_parent_exited_is_reaped_and_counted_by_the_script() -> None:
    """A child that starts a grandchild and exits at once: the grandchild (a daemon) spends CPU
    after its parent is gone. Without the subreaper that CPU reaches no one's RUSAGE_CHILDREN."""
    import subprocess
    import sys

    from tests.helpers.benchscripts import BENCHMARKS

    program = f"""
import subprocess, sys
sys.path.insert(0, {str(BENCHMARKS)!r})
import suite_cpu
assert suite_cpu.become_subreaper()
burn = "import time\\nend = time.process_time() + 0.4\\nwhile time.process_time() < end: pass"
subprocess.run([sys.executable, "-c", f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {{burn!r}}])"])
before = suite_cpu.children_cpu_s()
left_s, left = suite_cpu.reap_descendants(30)
print(suite_cpu.children_cpu_s() - before, left_s, left)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    orphan_cpu, left_s, left = out.stdout.split(maxsplit=2)
    assert float(orphan_cpu) >= 0.4 and float(left_s) == 0.0 and left.strip() == "[]"
