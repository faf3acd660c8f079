"""Replay a recorded run with the current code and no model: a zero-token regression run.

Each task runs through the real batch (prepare, documents, prompt assembly, tools, checks,
attempts, fallback) with an LLM client whose transport answers from the task's recorded trace in
order (`datasolver.llm.replay`). Afterwards each task's new trace is compared with the recording
(`replay_compare`) and its prediction signature with the old one:

- identical: every request had the recorded input and the prediction scores the same;
- diverged at request k: request k's input differs (a tool result, a prompt, a check), or the
  replay stopped early, or only the prediction differs;
- recording incomplete: the replay asked for more answers than were recorded, or the recorded
  run never finished the task (killed) or its trace is damaged.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver import safe_write
from datasolver.data.schema_formats import SCHEMA_FORMATS
from datasolver.eval import compare_scores, find_gold, prediction_signature, score_files
from datasolver.llm import LLMSettings, read_trace
from datasolver.llm.replay import REPLAY_BASE_URL, Exchange, ReplayLibrary, exchanges_from_events
from datasolver.pipeline.batch import run_batch_sync
from datasolver.pipeline.config import DEFAULT_TASK_TIMEOUT_S, SUMMARY_FILE, RunConfig
from datasolver.pipeline.errors import InputError, UnknownTasks
from datasolver.pipeline.progress import Progress
from datasolver.pipeline.replay_compare import Divergence, first_divergence, make_normalizer
from datasolver.solver.publish import prediction_path, published_prediction
from datasolver.untrusted_json import BadJSON, as_dict, as_float, as_int, as_list, read_object

REPLAY_SUMMARY_FILE = "replay_summary.json"
IDENTICAL, DIVERGED, INCOMPLETE = "identical", "diverged", "recording incomplete"
TRACE_FILE = "trace.jsonl"


@dataclass
class ReplayTask:
    """One task's replay against its recording."""

    task_id: str
    outcome: str
    divergence: Divergence | None = None
    old_status: str | None = None
    new_status: str | None = None
    old_signature: str | None = None
    new_signature: str | None = None
    recorded_exchanges: int = 0
    replayed_exchanges: int = 0
    missing_exchanges: int = 0
    notes: list[str] = field(default_factory=list)
    old_score: float | None = None
    new_score: float | None = None
    score_change: str | None = None
    """fixed | broken | same (with --gold), as `datasolver eval --baseline` classifies them."""

    @property
    def verdict(self) -> str:
        if self.outcome == DIVERGED and self.divergence is not None:
            return self.divergence.describe()
        return self.outcome

    def line(self) -> str:
        score = ""
        if self.score_change is not None:
            score = f"  score {_fmt(self.old_score)} → {_fmt(self.new_score)} ({self.score_change})"
        same = " (same)" if self.outcome == DIVERGED and self.old_signature == self.new_signature else ""
        return (f"{self.task_id}  {self.verdict}  prediction {self.old_signature} → {self.new_signature}"
                f"{same}{score}")

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id, "outcome": self.outcome, "verdict": self.verdict,
            "divergence": self.divergence.to_json() if self.divergence else None,
            "old_status": self.old_status, "new_status": self.new_status,
            "old_signature": self.old_signature, "new_signature": self.new_signature,
            "same_prediction": self.old_signature == self.new_signature,
            "recorded_exchanges": self.recorded_exchanges, "replayed_exchanges": self.replayed_exchanges,
            "missing_exchanges": self.missing_exchanges, "notes": self.notes,
            "old_score": self.old_score, "new_score": self.new_score, "score_change": self.score_change,
        }


@dataclass
class ReplaySummary:
    """A whole replay: where things are, and every task's verdict."""

    recorded_logs: str
    input_dir: str
    output_dir: str
    logs_dir: str
    gold_dir: str | None
    seconds: float = 0.0
    tasks: list[ReplayTask] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        seen = Counter(t.outcome for t in self.tasks)
        return {k: seen.get(k, 0) for k in (IDENTICAL, DIVERGED, INCOMPLETE)}

    def to_json(self) -> dict[str, Any]:
        changes = Counter(t.score_change for t in self.tasks if t.score_change)
        return {
            "recorded_logs": self.recorded_logs, "input_dir": self.input_dir, "output_dir": self.output_dir,
            "logs_dir": self.logs_dir, "gold_dir": self.gold_dir, "seconds": round(self.seconds, 3),
            "counts": self.counts(), "score_changes": dict(changes) if self.gold_dir else None,
            "tasks": [t.to_json() for t in sorted(self.tasks, key=lambda t: t.task_id)],
        }


def recorded_task_ids(logs_dir: Path) -> list[str]:
    """Task ids with a trace under `logs_dir` (sorted)."""
    if not Path(logs_dir).is_dir():
        raise InputError(f"no logs folder at {logs_dir}")
    return sorted(p.parent.name for p in Path(logs_dir).glob(f"*/{TRACE_FILE}"))


def last_run(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of the last run in a trace (a resumed or forced run appends to the same file)."""
    starts = [i for i, e in enumerate(events) if e.get("event") == "task_start"]
    return events[starts[-1]:] if starts else events


def replay_settings(recorded: dict[str, Any], library: ReplayLibrary) -> LLMSettings:
    """The recorded call policy with the replay transport and no waiting between retries."""
    kept = as_dict(recorded.get("settings"))
    model = kept.get("model") or recorded.get("model")
    values: dict[str, Any] = {"model": model if isinstance(model, str) and model else "replay"}
    # A recorded value is used only when it is a number (a flag) of its range: logs may come from anyone.
    for name, key, read in (("temperature", "temperature", as_float), ("max_retries", "max_retries", as_int),
                            ("read_timeout", "read_timeout_s", as_float)):
        number = read(kept.get(key), -1)
        if number >= 0:
            values[name] = number
    if isinstance(kept.get("enable_thinking"), bool):
        values["enable_thinking"] = kept["enable_thinking"]
    return LLMSettings(base_url=REPLAY_BASE_URL, api_key=None, initial_backoff=0.0, max_backoff=0.0,
                       retry_after_cap=0.0, transport=library.transport_for, **values)


def replay_run(
    recorded_logs: Path,
    input_dir: Path,
    output_dir: Path,
    *,
    logs_dir: Path | None = None,
    task_ids: tuple[str, ...] | None = None,
    workers: int = 4,
    gold_dir: Path | None = None,
    progress: Progress | None = None,
) -> ReplaySummary:
    """Replay every recorded task (or `task_ids`) into `output_dir`; write replay_summary.json there."""
    recorded_logs, output_dir = Path(recorded_logs), Path(output_dir)
    logs_dir = Path(logs_dir) if logs_dir else output_dir.absolute().with_name(output_dir.name + "-replay-logs")
    available = recorded_task_ids(recorded_logs)
    if task_ids:
        unknown = [t for t in task_ids if t not in available]
        if unknown:
            raise UnknownTasks(f"no recorded trace for {', '.join(unknown)} in {recorded_logs}; recorded: "
                               f"{', '.join(available[:10])}{' …' if len(available) > 10 else ''}")
    chosen = list(task_ids) if task_ids else available
    if not chosen:
        raise InputError(f"no <task_id>/{TRACE_FILE} under {recorded_logs}: nothing to replay")
    recorded, summary_note = _recorded_summary(recorded_logs / SUMMARY_FILE)
    old_runs: dict[str, tuple[list[dict[str, Any]], int]] = {}
    trace_notes: dict[str, list[str]] = {}
    recordings: dict[str, list[Exchange]] = {}
    for task_id in chosen:
        events, damaged = read_trace(recorded_logs / task_id / TRACE_FILE, trace_notes.setdefault(task_id, []))
        old_runs[task_id] = (last_run(events), damaged)
        recordings[task_id] = exchanges_from_events(old_runs[task_id][0])
    for task_id in chosen:  # replay traces are ours to rewrite; a second replay must not append
        safe_write.remove(logs_dir / task_id / TRACE_FILE, base=logs_dir)
    library = ReplayLibrary(recordings)
    kept = as_dict(recorded.get("settings"))
    limits = None
    switches = {name: kept[name] for name in ("direct_answer", "hold_flagged") if isinstance(kept.get(name), bool)}
    if isinstance(kept.get("stall_rounds"), int) and not isinstance(kept["stall_rounds"], bool):
        switches["stall_rounds"] = kept["stall_rounds"]
    if kept.get("schema_format") in SCHEMA_FORMATS:  # the recorded prompt's tables, written the same way
        switches["schema_format"] = kept["schema_format"]
    if as_int(kept.get("max_attempts")) > 0 or switches:
        from datasolver.agent import Limits

        attempts = as_int(kept.get("max_attempts"))
        limits = Limits(**({"max_attempts": attempts} if attempts > 0 else {}), **switches)
    timeout = as_float(kept.get("task_timeout_s")) or as_float(recorded.get("task_timeout_s"))
    config = RunConfig(
        input_dir=Path(input_dir), output_dir=output_dir, logs_dir=logs_dir,
        settings=replay_settings(recorded, library), workers=workers,
        task_timeout_s=timeout if timeout > 0 else DEFAULT_TASK_TIMEOUT_S,
        task_ids=tuple(chosen), force=True, doc_llm=kept.get("doc_llm") is not False, limits=limits,
    )
    run = run_batch_sync(config, progress=progress)
    named = [v for v in (recorded.get("output_dir"), recorded.get("scratch_dir"), recorded.get("logs_dir"))
             if isinstance(v, str)]
    normalize = make_normalizer([*named, str(output_dir.absolute()), run.scratch_dir, str(logs_dir.absolute())])
    new_records = {r.task_id: r for r in run.tasks}
    old_records = {t["task_id"]: t for t in as_list(recorded.get("tasks"))
                   if isinstance(t, dict) and isinstance(t.get("task_id"), str)}
    summary = ReplaySummary(str(recorded_logs), str(input_dir), str(output_dir), str(logs_dir),
                            str(gold_dir) if gold_dir else None, seconds=run.seconds)
    for task_id in chosen:
        old_events, damaged = old_runs[task_id]
        new_events = last_run(read_trace(logs_dir / task_id / TRACE_FILE)[0])
        cursor = library.cursor(task_id)
        result = ReplayTask(task_id, IDENTICAL, recorded_exchanges=len(cursor.exchanges),
                            replayed_exchanges=cursor.served, missing_exchanges=cursor.missing)
        old_end = next((e for e in reversed(old_events) if e.get("event") == "task_end"), None)
        new_record = new_records.get(task_id)
        old_status = (old_end or old_records.get(task_id) or {}).get("status")
        result.old_status = None if old_status is None else str(old_status)
        result.new_status = new_record.status if new_record else None
        old_prediction = _old_prediction(old_end, recorded, task_id)
        result.old_signature = prediction_signature(old_prediction) if old_prediction else None
        result.new_signature = prediction_signature(prediction_path(output_dir, task_id))
        result.divergence = first_divergence(old_events, new_events, normalize)
        if summary_note:
            result.notes.append(summary_note)
        if damaged:
            shown = "; ".join(trace_notes[task_id][:3])
            result.notes.append(f"{damaged} damaged line(s) in the recorded trace" + (f" ({shown})" if shown else ""))
        if old_end is None:
            result.notes.append("the recorded run never finished this task (no task_end)")
        if cursor.missing:
            result.notes.append(f"the replay asked for {cursor.missing} answer(s) past the recording's "
                                f"{len(cursor.exchanges)}")
        if damaged or old_end is None or cursor.missing:
            result.outcome = INCOMPLETE
        elif result.divergence is not None:
            result.outcome = DIVERGED
        elif result.old_signature != result.new_signature:
            result.outcome = DIVERGED
            result.divergence = Divergence(len(cursor.exchanges) + 1, "every request matched the recording, "
                                                                       "but the prediction differs")
        summary.tasks.append(result)
    if gold_dir is not None:
        _score_changes(summary, Path(gold_dir), recorded, old_runs)
    write_replay_summary(summary, output_dir / REPLAY_SUMMARY_FILE)
    return summary


def write_replay_summary(summary: ReplaySummary, path: Path) -> Path:
    return safe_write.write_file(Path(path), json.dumps(summary.to_json(), ensure_ascii=False, indent=2) + "\n")


def _recorded_summary(path: Path) -> tuple[dict[str, Any], str | None]:
    """The recorded run_summary.json, or {} and why it cannot be used."""
    try:
        return read_object(path), None
    except FileNotFoundError:
        return {}, None
    except BadJSON as exc:
        return {}, f"the recorded {SUMMARY_FILE} is unusable ({exc}); its settings were not used"


def _old_prediction(old_end: dict[str, Any] | None, recorded: dict[str, Any], task_id: str) -> Path | None:
    """The recorded run's prediction: `<its output_dir>/<task_id>/prediction.csv` when a regular
    file is there; a path a trace names is never opened (a trace may come from anyone)."""
    output_dir = recorded.get("output_dir")
    return published_prediction(Path(output_dir), task_id) if isinstance(output_dir, str) and output_dir else None


def _score_changes(summary: ReplaySummary, gold_dir: Path, recorded: dict[str, Any],
                   old_runs: dict[str, tuple[list[dict[str, Any]], int]]) -> None:
    """Old and new scores against gold, classified the way `eval --baseline` does."""
    gold = find_gold(gold_dir)
    old_scores: dict[str, float] = {}
    new_scores: dict[str, float] = {}
    for task in summary.tasks:
        if task.task_id not in gold:
            task.notes.append("no gold answer for this task")
            continue
        old_end = next((e for e in reversed(old_runs[task.task_id][0]) if e.get("event") == "task_end"), None)
        old_path = _old_prediction(old_end, recorded, task.task_id)
        old_scores[task.task_id] = task.old_score = (
            score_files(old_path, gold[task.task_id], explain=False).score if old_path else 0.0)
        new_scores[task.task_id] = task.new_score = score_files(
            prediction_path(Path(summary.output_dir), task.task_id), gold[task.task_id], explain=False).score
    comparison = compare_scores(old_scores, new_scores)
    fixed = {t for t, _, _ in comparison.fixed}
    broken = {t for t, _, _ in comparison.broken}
    for task in summary.tasks:
        if task.task_id in old_scores:
            if task.task_id in fixed or task.task_id in broken:
                task.score_change = "fixed" if task.task_id in fixed else "broken"
            else:
                same = abs(old_scores[task.task_id] - new_scores[task.task_id]) < 1e-9
                task.score_change = "same" if same else "still failing"


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"
