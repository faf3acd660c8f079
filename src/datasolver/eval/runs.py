"""Score a whole prediction folder against a gold folder; save and load the results as JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver import untrusted_json
from datasolver.eval.errors import InvalidRunFile, NoGoldTasks
from datasolver.eval.score import DEFAULT_PENALTY, MISSING, TaskScore, check_penalty, score_files

GOLD_NAME = "gold.csv"
PRED_NAME = "prediction.csv"
UNKNOWN = "unknown"
DIFFICULTY_ORDER = ("easy", "medium", "hard", "extreme")
RESULTS_VERSION = 1


@dataclass
class TaskResult:
    """One task of a run: its id, difficulty and score."""

    task_id: str
    difficulty: str
    result: TaskScore

    @property
    def score(self) -> float:
        """The task's score (shortcut for result.score)."""
        return self.result.score


@dataclass
class EvalReport:
    """All tasks of one run against one gold set, with the means people quote."""

    tasks: list[TaskResult]
    penalty: float = DEFAULT_PENALTY
    pred_dir: str = ""
    gold_dir: str = ""
    input_dir: str | None = None
    pred_name: str = PRED_NAME
    unscored: list[str] = field(default_factory=list)  # predictions with no gold task
    warnings: list[str] = field(default_factory=list)

    @property
    def mean(self) -> float:
        """Mean task score; a missing prediction counts as 0."""
        return _mean([t.score for t in self.tasks])

    @property
    def by_difficulty(self) -> dict[str, tuple[float, int]]:
        """Difficulty → (mean score, task count), easy to extreme first, unknown last."""
        groups: dict[str, list[float]] = {}
        for task in self.tasks:
            groups.setdefault(task.difficulty, []).append(task.score)
        return {d: (_mean(groups[d]), len(groups[d])) for d in sorted(groups, key=difficulty_rank)}

    @property
    def missing(self) -> list[str]:
        """Task ids with no prediction file."""
        return [t.task_id for t in self.tasks if t.result.status == MISSING]

    def scores(self) -> dict[str, float]:
        """Task id → score."""
        return {t.task_id: t.score for t in self.tasks}

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the results JSON (means included for readers other than this code)."""
        return {
            "version": RESULTS_VERSION,
            "penalty": self.penalty,
            "pred_dir": self.pred_dir,
            "gold_dir": self.gold_dir,
            "input_dir": self.input_dir,
            "pred_name": self.pred_name,
            "mean": self.mean,
            "by_difficulty": {d: {"mean": m, "tasks": n} for d, (m, n) in self.by_difficulty.items()},
            "missing": self.missing,
            "unscored": self.unscored,
            "warnings": self.warnings,
            "tasks": {t.task_id: {"difficulty": t.difficulty, **t.result.to_dict()} for t in self.tasks},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalReport:
        """Inverse of to_dict (means are recomputed, not trusted)."""
        tasks = [
            TaskResult(task_id, entry.get("difficulty", UNKNOWN), TaskScore.from_dict(entry))
            for task_id, entry in sorted(data["tasks"].items())
        ]
        return cls(
            tasks=tasks,
            penalty=data.get("penalty", DEFAULT_PENALTY),
            pred_dir=data.get("pred_dir", ""),
            gold_dir=data.get("gold_dir", ""),
            input_dir=data.get("input_dir"),
            pred_name=data.get("pred_name", PRED_NAME),
            unscored=list(data.get("unscored", [])),
            warnings=list(data.get("warnings", [])),
        )

    def save(self, path: Path) -> None:
        """Write the results JSON (UTF-8, Chinese kept readable)."""
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def load_report(path: Path) -> EvalReport:
    """Read a results JSON written by EvalReport.save / `datasolver eval --json`."""
    path = Path(path)
    try:
        data = untrusted_json.read_json(path)
    except FileNotFoundError as exc:
        raise InvalidRunFile(f"{path}: no such results file") from exc
    except (OSError, untrusted_json.BadJSON) as exc:
        raise InvalidRunFile(f"{path}: not a results JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict):
        raise InvalidRunFile(f"{path}: no 'tasks' object; write it with `datasolver eval --json FILE`")
    if data.get("version") != RESULTS_VERSION:
        raise InvalidRunFile(f"{path}: results version {data.get('version')!r}, expected {RESULTS_VERSION}")
    try:
        return EvalReport.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
        raise InvalidRunFile(f"{path}: malformed task entry ({exc!r})") from exc


def find_gold(gold_dir: Path) -> dict[str, Path]:
    """Task id → gold file, from `GOLD_DIR/<task>/gold.csv`, else `GOLD_DIR/output/<task>/gold.csv`."""
    gold_dir = Path(gold_dir)
    if not gold_dir.is_dir():
        raise NoGoldTasks(f"gold folder not found: {gold_dir}")
    for root in (gold_dir, gold_dir / "output"):
        found = {p.parent.name: p for p in root.glob(f"*/{GOLD_NAME}") if p.is_file()}
        if found:
            return dict(sorted(found.items()))
    raise NoGoldTasks(
        f"no <task>/{GOLD_NAME} under {gold_dir} or {gold_dir / 'output'}; pass the folder holding the task folders"
    )


def read_difficulty(input_dir: Path | None, task_id: str) -> tuple[str, str | None]:
    """The task's difficulty from `<input>/<task>/task.json` (or `<input>/input/<task>/…`).

    Returns (difficulty, warning): "unknown" when there is no input folder, no task.json or
    no difficulty key; the warning says why when a file exists but cannot be used.
    """
    if input_dir is None:
        return UNKNOWN, None
    for root in (Path(input_dir), Path(input_dir) / "input"):
        path = root / task_id / "task.json"
        if not path.is_file():
            continue
        try:
            data = untrusted_json.read_json(path)
        except (OSError, untrusted_json.BadJSON) as exc:
            return UNKNOWN, f"{path}: unreadable task.json ({exc})"
        value = data.get("difficulty") if isinstance(data, dict) else None
        return (str(value).strip().lower() or UNKNOWN) if value is not None else UNKNOWN, None
    return UNKNOWN, None


def evaluate_dir(
    pred_dir: Path,
    gold_dir: Path,
    input_dir: Path | None = None,
    penalty: float = DEFAULT_PENALTY,
    *,
    pred_name: str = PRED_NAME,
    explain: bool = True,
) -> EvalReport:
    """Score `<pred_dir>/<task>/<pred_name>` for every gold task; missing predictions score 0."""
    check_penalty(penalty)
    gold = find_gold(gold_dir)
    pred_dir = Path(pred_dir)
    tasks: list[TaskResult] = []
    warnings: list[str] = []
    for task_id, gold_csv in gold.items():
        difficulty, warning = read_difficulty(input_dir, task_id)
        if warning:
            warnings.append(warning)
        result = score_files(pred_dir / task_id / pred_name, gold_csv, penalty, explain=explain)
        tasks.append(TaskResult(task_id, difficulty, result))
    unscored = sorted(
        p.parent.name for p in pred_dir.glob(f"*/{pred_name}") if p.parent.name not in gold
    ) if pred_dir.is_dir() else []
    if not pred_dir.is_dir():
        warnings.append(f"prediction folder not found: {pred_dir} (every task scores 0)")
    return EvalReport(
        tasks=tasks,
        penalty=penalty,
        pred_dir=str(pred_dir),
        gold_dir=str(gold_dir),
        input_dir=str(input_dir) if input_dir is not None else None,
        pred_name=pred_name,
        unscored=unscored,
        warnings=warnings,
    )


def difficulty_rank(difficulty: str) -> tuple[int, str]:
    """Sort key: easy, medium, hard, extreme, then others alphabetically, unknown last."""
    if difficulty in DIFFICULTY_ORDER:
        return (DIFFICULTY_ORDER.index(difficulty), difficulty)
    return (len(DIFFICULTY_ORDER) + (difficulty == UNKNOWN), difficulty)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
