"""Batch concurrency benchmark: how close `run_batch` gets to the LLM-bound ideal.

A scripted model answers every request after a fixed latency (default 1 s). With N tasks of R
requests each on W workers, the ideal wall time is ceil(N / W) × R × latency: the model's
latency is the only cost. The ratio measured / ideal shows what the pipeline adds (prepare,
documents, tools, solver runs, threads, HTTP).

Two modes, each run once in this process (report ratios measured in one run, on one machine):

  llm    the pipeline around a stand-in solver that only sends R requests through the real
         client: isolates orchestration (semaphore, threads, prepare, documents, summary).
  agent  the real agent and the real tools on generated one-table tasks, the scripted model
         playing explore_data ×(R-4), read_solver, edit_solver, run_solver, final text. Adds
         CPU work per task (profiling, sandboxed solver.py runs), which competes for cores.
         Sandboxed runs are forked from the batch's fork server (warm runs, the default).
  agent-cold  the same with `warm_runs=False`: a fresh interpreter per sandboxed run.

`--mode all` (the default) runs llm, agent-cold and agent one after the other, and prints the
load average before and after (other processes on the machine compete for the same cores).
CPU seconds count this process and all its descendants (the fork server and its runs included).

    python benchmarks/batch_concurrency.py [--tasks 16] [--workers 8] [--latency 1.0]
                                           [--requests 6] [--mode all] [--work benchmarks/_work]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import time
from pathlib import Path

from datasolver.agent.solve import SolveOutcome, TaskRun
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings, user_message
from datasolver.llm.fake import ScriptedServer, text
from datasolver.pipeline import RunConfig, run_batch_sync


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (sandboxed solver.py runs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def make_tasks(root: Path, n: int) -> tuple[Path, dict[str, ScriptedAnswer]]:
    """`n` one-CSV tasks with distinct questions, and the scripted answer of each."""
    input_dir = root / "input"
    shutil.rmtree(input_dir, ignore_errors=True)
    answers = {}
    for i in range(1, n + 1):
        task_id = f"task_bench_{i:02d}"
        context = input_dir / task_id / "context" / "csv"
        context.mkdir(parents=True)
        rows = "\n".join(f"{k},{(k * i) % 97},{'abc'[k % 3]}" for k in range(200))
        (context / "sales.csv").write_text("id,amount,shop\n" + rows + "\n", encoding="utf-8")
        question = f"Benchmark question {i}: what is the total amount per shop?"
        (input_dir / task_id / "task.json").write_text(
            json.dumps({"task_id": task_id, "question": question}), encoding="utf-8")
        answers[task_id] = ScriptedAnswer(task_id, "SELECT shop, SUM(amount) AS total FROM sales GROUP BY shop",
                                          question)
    return input_dir, answers


def llm_only_solver(requests: int):
    """A stand-in for the agent: `requests` sequential chat calls, then a one-line prediction."""

    async def solve(run: TaskRun) -> SolveOutcome:
        started, task_id = time.monotonic(), run.task.task_id
        for _ in range(requests):
            await run.client.chat([user_message(f"{task_id}: next step")])
        target = run.output_dir / task_id / "prediction.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("answer\n1\n", encoding="utf-8")
        return SolveOutcome(task_id, "solved", 1, requests, run.client.usage.as_dict(),
                            time.monotonic() - started, target, None)

    return solve


def run_mode(mode: str, work: Path, n: int, workers: int, latency: float, requests: int) -> dict:
    warm = mode != "agent-cold"
    mode = "agent" if mode == "agent-cold" else mode
    input_dir, answers = make_tasks(work, n)
    # The agent mode: 4 fixed steps (read, edit, run, final text) plus explore calls.
    explore = tuple(f"SELECT shop, COUNT(*) FROM sales GROUP BY shop -- look {k}" for k in range(requests - 4))
    answers = {k: ScriptedAnswer(a.task_id, a.sql, a.question, explore) for k, a in answers.items()}
    handler = solver_handler(answers) if mode == "agent" else (lambda request: text("ok"))
    label = mode if warm or mode == "llm" else f"{mode}-cold"
    out = work / f"out_{label}"
    for folder in (out, work / f"logs_{label}"):
        shutil.rmtree(folder, ignore_errors=True)
    with ScriptedServer(handler=handler, latency_s=latency) as server:
        settings = LLMSettings(base_url=server.base_url, api_key=None, model="bench", max_retries=0)
        config = RunConfig(input_dir=input_dir, output_dir=out, logs_dir=work / f"logs_{label}",
                           settings=settings, workers=workers, doc_llm=False,
                           warm_runs=warm and mode == "agent")  # the llm stand-in runs no solver.py
        started, cpu_before = time.monotonic(), cpu_seconds()
        summary = run_batch_sync(config, solver=llm_only_solver(requests) if mode == "llm" else None)
        wall, cpu = time.monotonic() - started, cpu_seconds() - cpu_before
        sent = len(server.requests)
    ideal = math.ceil(n / workers) * requests * latency
    return {
        "mode": label, "sandbox": summary.sandbox, "tasks": n, "workers": workers, "latency_s": latency, "requests_per_task": requests,
        "requests_sent": sent, "solved": summary.counts()["solved"], "ideal_s": round(ideal, 2),
        "measured_s": round(wall, 2), "ratio": round(wall / ideal, 3),
        # CPU work spread over every core: a floor on wall time however the pipeline schedules it.
        "cpu_s": round(cpu, 2), "cpu_s_per_task": round(cpu / n, 3),
        "cpu_floor_s": round(cpu / (os.cpu_count() or 1), 2),
        "task_seconds_mean": round(sum(r.seconds for r in summary.tasks) / max(len(summary.tasks), 1), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--requests", type=int, default=6, help="model requests per task (>= 4 in agent mode)")
    parser.add_argument("--mode", choices=["llm", "agent", "agent-cold", "all"], default="all")
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work" / "batch")
    args = parser.parse_args()
    if args.mode != "llm" and args.requests < 4:
        parser.error("--requests must be at least 4 in agent mode (read, edit, run, final text)")
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"cpus: {os.cpu_count()}  load average before: {_load()}")
    modes = ["llm", "agent-cold", "agent"] if args.mode == "all" else [args.mode]
    for mode in modes:
        result = run_mode(mode, args.work, args.tasks, args.workers, args.latency, args.requests)
        print(json.dumps(result), flush=True)
    print(f"load average after: {_load()}")


def _load() -> str:
    """The 1, 5 and 15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
