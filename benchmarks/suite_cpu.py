"""Where the test suite's CPU goes: per test file, the pytest worker's own CPU and the CPU of the
processes it started and reaped, beside the whole machine's CPU over the run (a quiet machine
makes that the suite's). Runs the README's test command with this file loaded as a pytest plugin.

    python benchmarks/suite_cpu.py [--json suite_cpu.json] [--top 30] [-- PYTEST ARGS]

How to read it:
- "own" is the worker process itself (the tests' code and the product code they call in-process).
- "children" is what its child processes spent, counted when the worker reaps them: a process
  reaped late is counted in a later test (CPython reaps a finished `Popen` the next time any
  `Popen` starts). The session's fork server reaps its zygote, and so counts every warm run it
  forked, when a worker's session fixtures end: that is listed as its own line.
- "not reaped by a worker" is the machine's CPU minus everything the pytest processes counted:
  processes that were re-parented away from the workers (daemons, sandboxed runs whose parent
  exited first), the kernel's own work for the suite, and on a shared machine everyone else's work.
- "the suite's own CPU" does not depend on what else the machine runs: this script makes itself
  the subreaper of everything pytest starts (Linux `PR_SET_CHILD_SUBREAPER`), so a daemon whose
  parent exited (Ray's GCS, raylet and workers, a sandboxed run) is re-parented here instead of to
  init, and its CPU is counted when this script reaps it after pytest ends. It is pytest's
  processes plus those orphans, plus any still running a few seconds after pytest ended
  (counted from /proc as they stand, and listed).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_RECORDS_ENV = "DATASOLVER_SUITE_CPU_DIR"  # where each pytest process writes its records
SESSION_END = "(session fixtures' teardown, after the last test)"


# ----------------------------------------------------------------- the plugin (in every pytest process)
def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def record(line: dict) -> None:
    """Append one JSON line to this process's records, in the folder the benchmark made (if any)."""
    folder = os.environ.get(_RECORDS_ENV)
    if folder:
        with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


try:
    import pytest
except ImportError:  # the report side needs no pytest
    pytest = None

if pytest is not None:
    _spent: dict[str, float] = {"own": 0.0, "children": 0.0, "wall": 0.0}  # the current test's phases

    def _measure(add_to: dict[str, float]):
        own, children, started = *_cpu(), time.monotonic()

        def done() -> None:
            own_after, children_after = _cpu()
            add_to["own"] += own_after - own
            add_to["children"] += children_after - children
            add_to["wall"] += time.monotonic() - started
        return done

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(item):  # noqa: ANN001 - pytest's hook signatures
        done = _measure(_spent)
        yield
        done()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):  # noqa: ANN001
        done = _measure(_spent)
        yield
        done()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(item, nextitem):  # noqa: ANN001
        # After a worker's last test the session's fixtures end too: the fork server reaps its
        # zygote then, and with it the CPU of every warm run it forked. That is not this test's.
        last = {"own": 0.0, "children": 0.0, "wall": 0.0}
        done = _measure(_spent if nextitem is not None else last)
        yield
        done()
        worker = os.environ.get("PYTEST_XDIST_WORKER", "controller")
        record({"test": item.nodeid, **_spent, "process": worker})
        if nextitem is None:
            record({"test": f"{SESSION_END}::{worker}", **last, "process": worker})
        _spent.update(own=0.0, children=0.0, wall=0.0)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config):  # noqa: ANN001
        own, children = _cpu()
        record({"process": os.environ.get("PYTEST_XDIST_WORKER", "controller"), "own": own, "children": children})


# ----------------------------------------------------------------- the runner: every descendant counted
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (not to init), so reaping them here
    counts their CPU in this process's RUSAGE_CHILDREN. False where the kernel refuses (not Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _children() -> list[int]:
    """The pids whose parent is this process (from /proc)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == me:
                found.append(int(entry))
    return found


def _cpu_so_far(pid: int) -> float:
    """utime + stime of a running process (and of the children it reaped), seconds."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2:].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime


def reap_descendants(wait_s: float) -> tuple[float, list[str]]:
    """Reap every orphan re-parented here, waiting up to `wait_s` for them to exit; return the CPU
    seconds of those still running then (counted as they stand) and their names."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0.0, []
        if pid:
            continue
        if time.monotonic() >= deadline:
            left = _children()
            names = [Path(f"/proc/{p}/comm").read_text().strip() if Path(f"/proc/{p}/comm").exists() else "?"
                     for p in left]
            return sum(_cpu_so_far(p) for p in left), names
        time.sleep(0.1)


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ----------------------------------------------------------------- the report
def machine_cpu_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (user, nice, system, irq, softirq)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7)) / os.sysconf("SC_CLK_TCK")


def summarize(records: list[dict], machine_s: float, wall_s: float, reaped_s: float | None = None,
              left_running_s: float = 0.0) -> dict:
    """Per test file and in all: own and children CPU, wall; what no worker counted. `reaped_s`:
    the CPU of every process this script reaped (pytest and the orphans re-parented here)."""
    tests = [r for r in records if "test" in r and not r["test"].startswith(SESSION_END)]
    ends = [r for r in records if "test" in r and r["test"].startswith(SESSION_END)]
    processes = [r for r in records if "test" not in r]
    files: dict[str, dict[str, float]] = defaultdict(lambda: {"own": 0.0, "children": 0.0, "wall": 0.0, "tests": 0})
    for test in tests:
        row = files[test["test"].split("::")[0]]
        for key in ("own", "children", "wall"):
            row[key] += test[key]
        row["tests"] += 1
    in_tests = sum(t["own"] + t["children"] for t in tests)
    session_end = sum(t["own"] + t["children"] for t in ends)
    # The controller reaps the xdist workers before it ends, so its children hold theirs.
    controller = [p for p in processes if p["process"] == "controller"]
    counted = sum(p["own"] + p["children"] for p in (controller or processes))
    own_cpu = None if reaped_s is None else reaped_s + left_running_s
    return {
        "wall_s": wall_s,
        "machine_cpu_s": machine_s,
        "suite_cpu_s": own_cpu,  # pytest's processes, the orphans reaped here, those still running
        "orphans_cpu_s": None if reaped_s is None else reaped_s - counted + left_running_s,
        "pytest_processes_cpu_s": counted,  # the controller and every process it (or a worker) reaped
        "in_tests_cpu_s": in_tests,
        "session_fixtures_end_cpu_s": session_end,  # mostly the fork server's warm runs
        "outside_any_test_cpu_s": counted - in_tests - session_end,  # start-up, collection, session fixtures
        "not_reaped_by_a_worker_cpu_s": machine_s - counted,
        "tests": len(tests),
        "files": dict(sorted(files.items(), key=lambda kv: -(kv[1]["own"] + kv[1]["children"]))),
        "top_tests": sorted(tests, key=lambda t: -(t["own"] + t["children"]))[:100],
    }


def print_summary(summary: dict, top: int) -> None:
    print(f"{summary['tests']} tests, {summary['wall_s']:.0f} s wall; machine CPU {summary['machine_cpu_s']:.0f} s")
    if summary.get("suite_cpu_s") is not None:
        print(f"  the suite's own CPU (every process it started, wherever it ended): {summary['suite_cpu_s']:.0f} s, "
              f"of which orphans reaped here (daemons) {summary['orphans_cpu_s']:.0f} s"
              + (f"; still running after pytest: {', '.join(summary['left_running'])}" if summary.get("left_running")
                 else ""))
    print(f"  pytest processes (own + reaped children): {summary['pytest_processes_cpu_s']:.0f} s, "
          f"of which in tests {summary['in_tests_cpu_s']:.0f} s, at the session fixtures' end (the fork "
          f"server's warm runs) {summary['session_fixtures_end_cpu_s']:.0f} s, "
          f"the rest {summary['outside_any_test_cpu_s']:.0f} s")
    print(f"  not reaped by a worker: {summary['not_reaped_by_a_worker_cpu_s']:.0f} s")
    print(f"\n{'file':<48} {'tests':>5} {'own':>7} {'children':>8} {'wall':>7}")
    for name, row in list(summary["files"].items())[:top]:
        print(f"{name:<48} {row['tests']:>5} {row['own']:>7.1f} {row['children']:>8.1f} {row['wall']:>7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the whole summary here")
    parser.add_argument("--top", type=int, default=30, help="test files listed (default 30)")
    parser.add_argument("--wait-orphans", type=float, default=20.0,
                        help="seconds to wait, after pytest ends, for orphaned daemons to exit (default 20)")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest (default: the README's command)")
    args = parser.parse_args()
    subreaper = become_subreaper()
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as folder:
        env = dict(os.environ, **{_RECORDS_ENV: folder})
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parent), env.get("PYTHONPATH", "")) if p)
        machine_before, started, reaped_before = machine_cpu_s(), time.monotonic(), children_cpu_s()
        status = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "suite_cpu", *args.pytest_args],
                                cwd=REPO, env=env).returncode
        left_s, left = reap_descendants(args.wait_orphans) if subreaper else (0.0, [])
        machine_s, wall_s = machine_cpu_s() - machine_before, time.monotonic() - started
        records = [json.loads(line) for path in Path(folder).glob("*.jsonl")
                   for line in path.read_text(encoding="utf-8").splitlines()]
    reaped = children_cpu_s() - reaped_before if subreaper else None
    summary = summarize(records, machine_s, wall_s, reaped, left_s)
    summary["left_running"] = left
    print_summary(summary, args.top)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
