"""Resume: a task that already has a prediction in the output folder is done, unless forced."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from datasolver.data import Task
from datasolver.solver import has_prediction


def split_for_resume(tasks: Iterable[Task], output_dir: Path, *, force: bool = False) -> tuple[list[Task], list[Task]]:
    """(tasks to run, tasks already finished). With `force`, every task runs."""
    todo: list[Task] = []
    done: list[Task] = []
    for task in tasks:
        (done if not force and has_prediction(output_dir, task.task_id) else todo).append(task)
    return todo, done
