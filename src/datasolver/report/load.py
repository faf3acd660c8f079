"""What a report shows, read from a run's logs only: the run's summary and <task_id>/trace.jsonl
(plus, with gold, the predictions under the output folder given, scored by the eval room).

A logs folder may hold several runs (`datasolver.run_logs`): the report shows one, the latest
(`run_summary.json`) or the one named by its id. With a run id, only that run's part of each trace
counts (its `task_start` carries the id): a task the run skipped shows no earlier run's events,
and a trace the run never wrote to is not one of its tasks. A summary from before run ids is read
as it was: every trace, from its last `task_start`.

A trace cut short by a killed run, or with unreadable lines, still gives what it holds; the task
is marked (`damaged`, `unfinished`). Nothing here trusts what it reads: any JSON value may stand
in any field (each is checked for its type here), a line nested too deeply or too long is a note,
the renderer escapes, and no path named in the logs is ever opened: traces are
`<logs>/<task_id>/trace.jsonl` and predictions `<predictions_dir>/<task_id>/prediction.csv`,
regular files only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.eval import EvalError, find_gold, read_strict_csv, score_files
from datasolver.eval.score import TaskScore
from datasolver.llm import read_trace
from datasolver.run_logs import chosen_summary, is_run_id, run_ids
from datasolver.safe_write import is_one_name
from datasolver.solver.publish import published_prediction
from datasolver.eval.confidence import LEVELS
from datasolver.untrusted_json import BadJSON, as_dict, as_float, as_int, read_object

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
    damage_notes: list[str] = field(default_factory=list)
    unfinished: bool = False
    solver_code: str | None = None
    solver_note: str | None = None
    self_check: str | None = None
    prediction: str | None = None
    score: TaskScore | None = None
    prediction_table: tuple[list[str], list[list[str]]] | None = None
    gold_table: tuple[list[str], list[list[str]]] | None = None
    requests_per_attempt: list[int] = field(default_factory=list)
    confidence: str | None = None
    """high | medium | low, the run summary's `TaskRecord.confidence`; None without one (or an unknown word)."""

    @property
    def marks(self) -> list[str]:
        """Why this task's trace may be partial."""
        out = []
        if self.damaged_lines or self.damage_notes:
            why = "; ".join(self.damage_notes[:3]) + (" …" if len(self.damage_notes) > 3 else "")
            out.append(f"damaged trace: {self.damaged_lines} unreadable line(s)" + (f" ({why})" if why else ""))
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
    run_id: str | None = None
    """The run shown (None: a summary from before run ids, or none)."""
    runs: list[str] = field(default_factory=list)
    """Every run id with a summary in the logs folder, oldest first."""

    @property
    def scored(self) -> list[TaskView]:
        return [t for t in self.tasks if t.score is not None]


def load_run(logs_dir: Path, gold_dir: Path | None = None, predictions_dir: Path | None = None, *,
             run_id: str | None = None) -> RunView:
    """Read a run's summary (the latest, or run `run_id`'s: UnknownRun when it has none) and its
    traces under `logs_dir`; with `gold_dir`, score the predictions under `predictions_dir` (the
    run's output folder) against it."""
    logs_dir = Path(logs_dir)
    warnings: list[str] = []
    summary: dict[str, Any] = {}
    path = chosen_summary(logs_dir, run_id)
    name = path.name if path is not None else "run summary"
    try:
        if path is None:
            raise FileNotFoundError(logs_dir)
        summary = read_object(path)
    except FileNotFoundError:
        warnings.append("no run summary: the tasks come from their traces")
    except BadJSON as exc:
        warnings.append(f"{name} is unreadable ({exc}); the tasks come from their traces")
    summary = _clean_summary(summary)
    shown = run_id if run_id is not None else (summary["run_id"] if is_run_id(summary.get("run_id")) else None)
    tasks_field = summary.get("tasks")
    records = {str(r.get("task_id")): r for r in (tasks_field if isinstance(tasks_field, list) else [])
               if isinstance(r, dict)}
    strange = sorted(t for t in records if not is_one_name(t))
    if strange:
        warnings.append(f"{len(strange)} task id(s) in {name} are not folder names; their traces are not "
                        f"read: {', '.join(repr(t[:60]) for t in strange[:5])}")
    ids = sorted(set(records) | {p.parent.name for p in logs_dir.glob(f"*/{TRACE_FILE}")})
    tasks = [_task(task_id, records.get(task_id),
                   logs_dir / task_id / TRACE_FILE if is_one_name(task_id) else None, shown) for task_id in ids]
    tasks = [t for t in tasks if t is not None]
    run = RunView(str(logs_dir), summary, tasks, str(gold_dir) if gold_dir else None, warnings, shown,
                  run_ids(logs_dir))
    if gold_dir is not None:
        _score(run, Path(gold_dir), Path(predictions_dir) if predictions_dir is not None else None)
    return run


def _clean_summary(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with the fields the page computes with set to their types (any JSON may stand there)."""
    clean = dict(summary)
    clean["usage"] = {str(k): as_int(v) for k, v in as_dict(summary.get("usage")).items()}
    clean["settings"] = as_dict(summary.get("settings"))
    errors = summary.get("discovery_errors")
    clean["discovery_errors"] = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    for key in ("seconds", "task_timeout_s"):
        if key in summary:
            clean[key] = as_float(summary[key])
    if "model" in summary:
        clean["model"] = _str_or_none(summary["model"])
    return clean


def _task(task_id: str, record: dict[str, Any] | None, trace_path: Path | None, run_id: str | None) -> TaskView | None:
    """One task of the run; None for a trace the run `run_id` never wrote to and has no record of."""
    notes: list[str] = []
    events, damaged = read_trace(trace_path, notes) if trace_path is not None else ([], 0)
    events = run_part(events, run_id)
    if run_id is not None and record is None and not events:
        return None  # an earlier run's task, not this run's
    view = TaskView(task_id, events=events, damaged_lines=damaged, damage_notes=notes)
    end = next((e for e in reversed(events) if e.get("event") == "task_end"), None)
    view.unfinished = bool(events) and end is None
    source = end or record or {}
    if record and record.get("status") == "skipped":
        source = record
    view.status = str(source.get("status") or ("unfinished" if view.unfinished else "unknown"))
    view.reason = _str_or_none(source.get("reason"))
    view.attempts = as_int(source.get("attempts"))
    usage = as_dict(source.get("usage"))
    view.requests = as_int(source.get("requests") or usage.get("requests"))
    view.tokens = as_int(source.get("tokens") or usage.get("total_tokens"))
    view.seconds = as_float(source.get("seconds"))
    view.prediction = _str_or_none(source.get("prediction"))  # shown as text; never opened
    label = source.get("confidence")
    view.confidence = label if label in LEVELS else None
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
            view.requests_per_attempt.append(as_int(event.get("requests")))
        if is_failed_check(event):
            view.failed_checks += 1
    if view.unfinished:  # what the trace holds is all there is
        responses = sum(1 for e in events if e.get("event") == "response")
        view.requests = max(view.requests, responses)
        view.tokens = max(view.tokens, sum(as_int(as_dict(e.get("usage")).get("total_tokens"))
                                           for e in events if e.get("event") == "response"))
        view.attempts = max(view.attempts, sum(1 for e in events if e.get("event") == "attempt_start"))
    return view


def run_part(events: list[dict[str, Any]], run_id: str | None) -> list[dict[str, Any]]:
    """The events of one run in a trace that several runs appended to: from the last `task_start`
    carrying `run_id` up to the next `task_start`; with no run id, from the last `task_start`."""
    starts = [i for i, e in enumerate(events) if e.get("event") == "task_start"]
    if run_id is None:
        return events[starts[-1]:] if starts else events
    mine = [i for i in starts if events[i].get("run_id") == run_id]
    if not mine:
        return []
    after = [i for i in starts if i > mine[-1]]
    return events[mine[-1]:after[0] if after else len(events)]


def is_failed_check(event: dict[str, Any]) -> bool:
    """A check event (any kind naming a check) that says it failed, in any of the usual spellings."""
    kind = str(event.get("event") or "")
    if "check" not in kind:
        return False
    if event.get("ok") is False or event.get("passed") is False:
        return True
    return bool(event.get("failed")) or str(event.get("status") or event.get("result") or "").lower() in (
        "failed", "fail", "error")


def _score(run: RunView, gold_dir: Path, predictions_dir: Path | None) -> None:
    try:
        gold = find_gold(gold_dir)
    except EvalError as exc:
        run.warnings.append(f"gold folder unusable: {exc}")
        return
    if predictions_dir is None:
        # The summary's output_dir is what the logs say, and logs may come from anyone.
        named = run.summary.get("output_dir")
        run.warnings.append("no prediction is scored: pass --predictions DIR, the run's output folder"
                            + (f" (the summary names {str(named)[:200]})" if named else ""))
        return
    for task in run.tasks:
        if task.task_id not in gold:
            continue
        path = published_prediction(predictions_dir, task.task_id)  # a regular file, never a link
        try:
            task.score = score_files(path, gold[task.task_id])  # None: no prediction, score 0
        except EvalError as exc:
            run.warnings.append(f"{task.task_id}: {exc}")
            continue
        task.gold_table = _preview(gold[task.task_id])
        task.prediction_table = _preview(path) if path is not None else None


def _preview(path: Path) -> tuple[list[str], list[list[str]]] | None:
    try:
        table = read_strict_csv(path)
    except (EvalError, OSError):
        return None
    return table.header, table.rows[:TABLE_PREVIEW_ROWS]


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
