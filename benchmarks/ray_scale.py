"""Ray scale-out: tasks per minute with 1 and 2 local Ray workers against a 1 s model.

Each setting starts its own local Ray (`ray.init(num_cpus=N)`), runs the same generated one-table
tasks through `run_batch(..., executor=RayExecutor())` with the real agent and tools, the scripted
model answering every request after `--latency` seconds (explore_data ×(R-4), read_solver,
edit_solver, run_solver, final text), each task reserving 1 CPU and `workers = N` request slots.
Both settings run in this one process, one after the other; the speed-up is their ratio.

    python benchmarks/ray_scale.py [--tasks 8] [--latency 1.0] [--requests 6] [--work benchmarks/_work]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import ray

from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline import RunConfig, run_batch_sync
from datasolver.pipeline.ray_executor import RayExecutor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from batch_concurrency import make_tasks  # noqa: E402  (the same generated tasks)


def run_setting(work: Path, workers: int, n: int, latency: float, requests: int) -> dict:
    input_dir, answers = make_tasks(work, n)
    explore = tuple(f"SELECT shop, COUNT(*) FROM sales GROUP BY shop -- look {k}" for k in range(requests - 4))
    answers = {k: ScriptedAnswer(a.task_id, a.sql, a.question, explore) for k, a in answers.items()}
    out, logs = work / f"out_ray{workers}", work / f"logs_ray{workers}"
    for folder in (out, logs):
        shutil.rmtree(folder, ignore_errors=True)
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        with ScriptedServer(handler=solver_handler(answers), latency_s=latency) as server:
            settings = LLMSettings(base_url=server.base_url, api_key=None, model="bench", max_retries=0)
            config = RunConfig(input_dir=input_dir, output_dir=out, logs_dir=logs, settings=settings,
                               workers=workers, doc_llm=False)
            executor = RayExecutor(cpus_per_task=1.0)
            started = time.monotonic()
            summary = run_batch_sync(config, executor=executor)
            wall = time.monotonic() - started
    finally:
        ray.shutdown()
    return {"ray_workers": workers, "tasks": n, "latency_s": latency, "requests_per_task": requests,
            "solved": summary.counts()["solved"], "wall_s": round(wall, 2),
            "tasks_per_minute": round(60 * n / wall, 2), "slot_peak": (executor.slot_stats or {}).get("peak")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--requests", type=int, default=6)
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work" / "ray")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"cpus: {os.cpu_count()}")
    results = [run_setting(args.work, w, args.tasks, args.latency, args.requests) for w in (1, 2)]
    for result in results:
        print(json.dumps(result))
    print(f"speed-up 2 vs 1 Ray workers: {results[1]['tasks_per_minute'] / results[0]['tasks_per_minute']:.2f}x")


if __name__ == "__main__":
    main()
