"""Report benchmark: generation time and file size of `datasolver report` on a synthetic large log.

A synthetic run (`tests/helpers/samplerun.py`, which the report's tests use too: mixed outcomes, one to two attempts of 3–8
requests, 4,000-character tool results, a retry, a compaction, a failed check, an unknown event
kind, one killed task) of N tasks is written once; then the report is generated with gold
(scores, gold diffs) several times, and the best and median wall times, the size and how many
timelines had to be trimmed are printed. Goal (issue 12): ≤ 5 s and ≤ 10 MB for 400 tasks.

    python benchmarks/report_size.py [--tasks 400] [--repeat 3] [--result-chars 4000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from datasolver.report import write_report
from datasolver.report.load import load_run
from datasolver.report.render import render_page

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: its tests' helpers
from tests.helpers.samplerun import write_sample_run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--result-chars", type=int, default=4000)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="datasolver-report-bench-"))
    if work.exists():
        shutil.rmtree(work)
    logs, gold = write_sample_run(work, tasks=args.tasks, result_chars=args.result_chars)
    trace_bytes = sum(p.stat().st_size for p in logs.glob("*/trace.jsonl"))
    events = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in logs.glob("*/trace.jsonl"))
    timings, load_times, render_times = [], [], []
    path = logs / "report.html"
    for _ in range(args.repeat):
        started = time.perf_counter()
        path = write_report(logs, gold_dir=gold)
        timings.append(time.perf_counter() - started)
        started = time.perf_counter()
        run = load_run(logs, gold)
        load_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        render_page(run)
        render_times.append(time.perf_counter() - started)
    page = path.read_text(encoding="utf-8")
    result = {
        "tasks": args.tasks,
        "trace_events": events,
        "trace_mb": round(trace_bytes / 1e6, 2),
        "report_mb": round(path.stat().st_size / 1e6, 2),
        "seconds_best": round(min(timings), 2),
        "seconds_median": round(statistics.median(timings), 2),
        "load_seconds_median": round(statistics.median(load_times), 2),
        "render_seconds_median": round(statistics.median(render_times), 2),
        "timelines_trimmed": page.count("timeline trimmed to keep the report small"),
        "goal_met": min(timings) <= 5.0 and path.stat().st_size <= 10_000_000,
    }
    print(json.dumps(result, indent=1))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
