"""benchmarks/local_server.py's own bookkeeping (the benchmark itself needs the bench-local extra
and minutes of CPU, so it is not run here): errors by kind from a trace, the server's access log
by status, the two smallest dev-style tasks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.helpers.benchscripts import load_benchmark



def load_bench():
    return load_benchmark("local_server")


def test_errors_are_tallied_by_kind_from_the_trace(tmp_path: Path) -> None:
    bench = load_bench()
    events = [
        {"event": "request"},
        {"event": "error", "error_type": "LLMContextLengthError", "status": 400},
        {"event": "retry", "reason": "status 503"},
        {"event": "error", "error_type": "CancelledError"},
        {"event": "tool_result", "name": "explore_data", "ok": False, "content": "UnknownTable: no table named 'x'."},
        {"event": "tool_result", "name": "read_solver", "ok": True, "content": "1:AB|x"},
        {"event": "text_tool_calls", "form": "hermes"},
        {"event": "attempt_end", "ended": "deadline"},
        {"event": "sent_back"},
    ]
    (tmp_path / "task_a").mkdir()
    (tmp_path / "task_a" / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    kinds = bench.trace_kinds(tmp_path, "task_a")
    assert kinds["request_errors"] == Counter({"LLMContextLengthError 400": 1, "CancelledError": 1})
    assert kinds["retries"] == Counter({"status 503": 1})
    assert kinds["tool_results"] == Counter({"explore_data (UnknownTable)": 1})
    assert (kinds["text_call_forms"], kinds["attempts_ended"]) == (Counter({"hermes": 1}), Counter({"deadline": 1}))
    assert kinds["other"] == Counter({"sent_back": 1})
    assert all(not counts for counts in bench.trace_kinds(tmp_path, "task_missing").values())


def test_access_log_lines_are_counted_by_status() -> None:
    log = ('INFO:     127.0.0.1:1 - "GET /v1/models HTTP/1.1" 200 OK\n'
           'INFO:     127.0.0.1:2 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
           'INFO:     127.0.0.1:3 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n')
    assert Counter(load_bench()._ACCESS.findall(log)) == Counter({"200": 1, "400": 1})


def test_the_smallest_tasks_are_chosen_by_context_bytes(tmp_path: Path) -> None:
    for name, size in [("task_big", 500), ("task_small", 10), ("task_mid", 100)]:
        context = tmp_path / "input" / name / "context"
        context.mkdir(parents=True)
        (context.parent / "task.json").write_text("{}", encoding="utf-8")
        (context / "t.csv").write_text("x" * size, encoding="utf-8")
    assert load_bench().smallest_tasks(tmp_path, 2) == ["task_small", "task_mid"]
