"""What a report shows, read from a run's logs only: run_summary.json and <task_id>/trace.jsonl
(plus, with gold, the predictions the summary points to, scored by the eval room).

A trace cut short by a killed run, or with unreadable lines, still gives what it holds; the task
is marked (`damaged`, `unfinished`). Nothing here trusts the text it reads: the renderer escapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.eval import EvalError, find_gold, read_strict_csv, score_files
from datasolver.eval.score import TaskScore
from datasolver.llm import read_trace
from datasolver.solver.publish import prediction_path

SUMMARY_FILE = "run_summary.json"
TRACE_FILE = "trace.jsonl"
TABLE_PREVIEW_ROWS = 20


@dataclass
class TaskView:
    """One task as the report shows it."""

    task_id: str
    question: str = ""
    status: str = "unknown"
    reason: str | None = None
    attempts: int = 0
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0
    failed_checks: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    damaged_lines: int = 0
    unfinished: bool = False
    solver_code: str | None = None
    solver_note: str | None = None
    self_check: str | None = None
    prediction: str | None = None
    score: TaskScore | None = None
    prediction_table: tuple[list[str], list[list[str]]] | None = None
    gold_table: tuple[list[str], list[list[str]]] | None = None
    requests_per_attempt: list[int] = field(default_factory=list)

    @property
    def marks(self) -> list[str]:
        """Why this task's trace may be partial."""
        out = []
        if self.damaged_lines:
            out.append(f"damaged trace: {self.damaged_lines} unreadable line(s)")
        if self.unfinished:
            out.append("trace ends before the task did (killed run?)")
        return out


@dataclass
class RunView:
    """The whole run."""

    logs_dir: str
    summary: dict[str, Any]
    tasks: list[TaskView]
    gold_dir: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def scored(self) -> list[TaskView]:
        return [t for t in self.tasks if t.score is not None]


def load_run(logs_dir: Path, gold_dir: Path | None = None) -> RunView:
    """Read the run summary and every trace under `logs_dir`; score predictions against gold."""
    logs_dir = Path(logs_dir)
    warnings: list[str] = []
    summary: dict[str, Any] = {}
    summary_path = logs_dir / SUMMARY_FILE
    if summary_path.is_file():
        try:
            loaded = json.loads(summary_path.read_text(encoding="utf-8", errors="replace"))
            summary = loaded if isinstance(loaded, dict) else {}
        except ValueError as exc:
            warnings.append(f"{SUMMARY_FILE} is unreadable ({exc}); the tasks come from their traces")
    else:
        warnings.append(f"no {SUMMARY_FILE}: the tasks come from their traces")
    records = {str(r.get("task_id")): r for r in summary.get("tasks") or [] if isinstance(r, dict)}
    ids = sorted(set(records) | {p.parent.name for p in logs_dir.glob(f"*/{TRACE_FILE}")})
    tasks = [_task(task_id, records.get(task_id), logs_dir / task_id / TRACE_FILE) for task_id in ids]
    run = RunView(str(logs_dir), summary, tasks, str(gold_dir) if gold_dir else None, warnings)
    if gold_dir is not None:
        _score(run, Path(gold_dir))
    return run


def _task(task_id: str, record: dict[str, Any] | None, trace_path: Path) -> TaskView:
    events, damaged = read_trace(trace_path) if trace_path.is_file() else ([], 0)
    starts = [i for i, e in enumerate(events) if e.get("event") == "task_start"]
    events = events[starts[-1]:] if starts else events  # the last run of a resumed trace
    view = TaskView(task_id, events=events, damaged_lines=damaged)
    end = next((e for e in reversed(events) if e.get("event") == "task_end"), None)
    view.unfinished = bool(events) and end is None
    source = end or record or {}
    if record and record.get("status") == "skipped":
        source = record
    view.status = str(source.get("status") or ("unfinished" if view.unfinished else "unknown"))
    view.reason = _str_or_none(source.get("reason"))
    view.attempts = _int(source.get("attempts"))
    usage = source.get("usage") if isinstance(source.get("usage"), dict) else {}
    view.requests = _int(source.get("requests") or usage.get("requests"))
    view.tokens = _int(source.get("tokens") or usage.get("total_tokens"))
    view.seconds = _float(source.get("seconds"))
    view.prediction = _str_or_none(source.get("prediction"))
    for event in events:
        kind = str(event.get("event") or "")
        if kind == "task_start":
            view.question = str(event.get("question") or "")
        elif kind == "solver_final":
            view.solver_code = str(event.get("code") or "")
            view.solver_note = _str_or_none(event.get("note"))
        elif kind == "tool_result" and event.get("name") == "run_solver":
            view.self_check = str(event.get("content") or "")
        elif kind == "attempt_end":
            view.requests_per_attempt.append(_int(event.get("requests")))
        if is_failed_check(event):
            view.failed_checks += 1
    if view.unfinished:  # what the trace holds is all there is
        responses = sum(1 for e in events if e.get("event") == "response")
        view.requests = max(view.requests, responses)
        view.tokens = max(view.tokens, sum(_int((e.get("usage") or {}).get("total_tokens"))
                                           for e in events if e.get("event") == "response"))
        view.attempts = max(view.attempts, sum(1 for e in events if e.get("event") == "attempt_start"))
    return view


def is_failed_check(event: dict[str, Any]) -> bool:
    """A check event (any kind naming a check) that says it failed, in any of the usual spellings."""
    kind = str(event.get("event") or "")
    if "check" not in kind:
        return False
    if event.get("ok") is False or event.get("passed") is False:
        return True
    return bool(event.get("failed")) or str(event.get("status") or event.get("result") or "").lower() in (
        "failed", "fail", "error")


def _score(run: RunView, gold_dir: Path) -> None:
    try:
        gold = find_gold(gold_dir)
    except EvalError as exc:
        run.warnings.append(f"gold folder unusable: {exc}")
        return
    output_dir = run.summary.get("output_dir")
    for task in run.tasks:
        if task.task_id not in gold:
            continue
        path = Path(task.prediction) if task.prediction else (
            prediction_path(Path(output_dir), task.task_id) if output_dir else None)
        if path is None:
            continue
        try:
            task.score = score_files(path, gold[task.task_id])
        except EvalError as exc:
            run.warnings.append(f"{task.task_id}: {exc}")
            continue
        task.gold_table = _preview(gold[task.task_id])
        task.prediction_table = _preview(path) if path.is_file() else None


def _preview(path: Path) -> tuple[list[str], list[list[str]]] | None:
    try:
        table = read_strict_csv(path)
    except (EvalError, OSError):
        return None
    return table.header, table.rows[:TABLE_PREVIEW_ROWS]


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _float(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
