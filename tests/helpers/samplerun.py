"""A synthetic run log (traces, run_summary.json, predictions and gold) for the report's
benchmark and browser tests: N tasks with mixed outcomes, long tool results, one killed task.

The traces have the shapes TraceWriter and the pipeline write (request, response, tool_call,
tool_result, attempt_start/end, retry, compaction, solver_final, task_end), plus an event kind
the report has never heard of, so rendering of unknown kinds is exercised too.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from datasolver.solver.publish import prediction_path

HOSTILE_QUESTION = 'Which <script>window.__pwned=1</script> "vendors" & <b>regions</b>?'
HOSTILE_RESULT = '<img src=x onerror="window.__pwned=2"></pre><script>window.__pwned=3</script>'


def write_sample_run(root: Path, tasks: int = 20, *, seed: int = 7, result_chars: int = 4000,
                     hostile: bool = True, killed: bool = True) -> tuple[Path, Path]:
    """Write `<root>/logs`, `<root>/output` and `<root>/gold`; return (logs dir, gold dir)."""
    rng = random.Random(seed)
    logs, output, gold = root / "logs", root / "output", root / "gold"
    records = []
    for i in range(tasks):
        task_id = f"task_{i:04d}"
        kind = "solved" if i % 5 else ("fallback" if i % 10 else "failed")
        if killed and i == tasks - 1:
            kind = "killed"
        question = HOSTILE_QUESTION if hostile and i == 1 else f"What is the total amount of region {i} in 2024?"
        correct = rng.random() < 0.7
        _write_csv(gold / task_id / "gold.csv", ["region", "amount"], [[f"r{i}", str(100 + i)], ["x", "2.5"]])
        if kind != "failed":
            rows = [[f"r{i}", str(100 + i if correct else 99 + i)], ["x", "2.5"]]
            header = ["region", "amount"] + ([] if correct else ["extra_id"])
            _write_csv(prediction_path(output, task_id), header,
                       [r + ([] if correct else [str(n)]) for n, r in enumerate(rows)])
        events, record = _trace(rng, task_id, question, kind, output, result_chars, hostile and i == 1)
        path = logs / task_id / "trace.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(e, ensure_ascii=False) for e in events]
        text = "\n".join(lines) + "\n"
        if kind == "killed":  # the run died mid-write
            text = "\n".join(lines) + "\n" + lines[-1][: len(lines[-1]) // 2]
        path.write_text(text, encoding="utf-8")
        if record is not None:
            records.append(record)
    counts = {s: sum(1 for r in records if r["status"] == s) for s in ("solved", "fallback", "failed", "skipped")}
    usage = {"requests": sum(r["requests"] for r in records), "total_tokens": sum(r["tokens"] for r in records)}
    summary = {"finished": not killed, "seconds": round(sum(r["seconds"] for r in records) / 4, 3),
               "model": "synthetic-model", "workers": 4, "task_timeout_s": 900.0, "time_budget_s": None,
               "output_dir": str(output), "logs_dir": str(logs), "counts": counts, "usage": usage,
               "discovery_errors": [],
               "settings": {"model": "synthetic-model", "temperature": 0.0, "max_retries": 4, "doc_llm": True},
               "tasks": records}
    (logs / "run_summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return logs, gold


def _trace(rng: random.Random, task_id: str, question: str, kind: str, output: Path, result_chars: int,
           hostile: bool) -> tuple[list[dict], dict | None]:
    seq = 0
    events: list[dict] = []

    def add(event: str, **fields) -> None:
        nonlocal seq
        seq += 1
        events.append({"ts": "2026-12-01T00:00:00.000+00:00", "event": event, "task_id": task_id, **fields,
                       "seq": seq})

    add("task_start", question=question, task_dir=f"/input/{task_id}")
    add("solve_start", mode="full", plan_reason=None, seconds_to_deadline=900.0)
    attempts = 1 if kind == "solved" else 2
    request_id = tokens = 0
    sql = f"SELECT region, SUM(amount) AS amount\nFROM sales -- region {task_id}\nWHERE year = 2024\nGROUP BY region"
    for attempt in range(1, attempts + 1):
        add("attempt_start", attempt=attempt)
        n_requests = rng.randint(3, 8)
        for step in range(n_requests):
            request_id += 1
            add("request", request_id=request_id, attempt=1, model="synthetic-model", tools=["explore_data"],
                messages_from=0 if step == 0 else 2 * step, messages_total=2 + 2 * step,
                messages=[{"role": "system", "content": "You are a data analyst. " * 40},
                          {"role": "user", "content": question}] if step == 0 else [])
            if step == 1 and attempt == 1:
                add("retry", request_id=request_id, attempt=1, reason="HTTP 503", delay_s=0.5, status=503,
                    error_type="LLMServerError", error="HTTP 503 from endpoint: busy")
            used = rng.randint(2000, 6000)
            tokens += used
            call = {"id": f"call_{request_id}", "type": "function",
                    "function": {"name": "explore_data", "arguments": json.dumps({"query": sql})}}
            add("response", request_id=request_id, attempt=1, latency_s=round(rng.uniform(0.5, 9), 3),
                finish_reason="tool_calls", content="", reasoning="", tool_calls=[call],
                usage={"requests": 1, "prompt_tokens": used - 50, "completion_tokens": 50, "total_tokens": used})
            add("tool_call", call_id=call["id"], name="explore_data", arguments={"query": sql, "limit": 50},
                repairs=[], error=None)
            body = HOSTILE_RESULT if hostile and step == 0 else ""
            body += "rows: 400 of 400\nregion\tamount\n" + "\n".join(
                f"r{k}\t{k * 3.5}" for k in range(result_chars // 10))
            add("tool_result", call_id=call["id"], name="explore_data", ok=step % 4 != 3,
                latency_s=0.04, content=body[:result_chars])
        if attempt == 1 and attempts > 1:
            add("compaction", attempt=1, dropped_messages=6, kept_tokens=3000)
            add("answer_check", attempt=attempt, check="extra columns", ok=False, detail="extra_id is not asked for")
        add("attempt_end", number=attempt, ended="answered" if attempt == attempts else "no_answer",
            requests=n_requests, tool_calls=n_requests, prediction=kind != "failed")
    if kind == "killed":
        return events, None
    add("vote_cast", attempt=attempts, voters=3, winner="a", note="an event kind the report does not know")
    code = ('#!/usr/bin/env python3\n"""solver.py"""\nfrom datasolver.data import Catalog\n\n'
            f'# Use run_sql("""SELECT ...""")\nresult = run_sql("""\n{sql}\n""")\n')
    add("solver_final", code=code, note=None)
    seconds = round(rng.uniform(5, 300), 3)
    status = "solved" if kind == "solved" else kind
    prediction = None if kind == "failed" else str(prediction_path(output, task_id))
    record = {"task_id": task_id, "status": status, "mode": "full", "attempts": attempts, "requests": request_id,
              "usage": {"requests": request_id, "total_tokens": tokens}, "tokens": tokens, "seconds": seconds,
              "reason": None if status == "solved" else "no answer passed the checks; ran the fallback",
              "error": None, "prediction": prediction, "document_tables": 0}
    add("task_end", **record)
    return events, record


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(",".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
