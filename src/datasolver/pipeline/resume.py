"""Resume: a task that already has a prediction in the output folder is done, unless forced."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from datasolver.data import Task

PREDICTION_FILE = "prediction.csv"


def prediction_path(output_dir: Path, task_id: str) -> Path:
    """Where a task's answer goes: `<output_dir>/<task_id>/prediction.csv`."""
    return Path(output_dir) / task_id / PREDICTION_FILE


def has_prediction(output_dir: Path, task_id: str) -> bool:
    """True when a non-empty prediction exists (an empty file is an interrupted write)."""
    path = prediction_path(output_dir, task_id)
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def split_for_resume(tasks: Iterable[Task], output_dir: Path, *, force: bool = False) -> tuple[list[Task], list[Task]]:
    """(tasks to run, tasks already finished). With `force`, every task runs."""
    todo: list[Task] = []
    done: list[Task] = []
    for task in tasks:
        (done if not force and has_prediction(output_dir, task.task_id) else todo).append(task)
    return todo, done
