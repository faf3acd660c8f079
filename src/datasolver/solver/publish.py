"""The one way to a published answer: where it goes, how it gets there, and what a task ended as.

`prediction_path` is the only spelling of `<output>/<task_id>/prediction.csv`; `publish_prediction`
is the only writer (atomic, so a reader or a resumed run never sees half a file). The agent, the
pipeline's fallback, `datasolver solve` and resume all go through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal, get_args

from datasolver import safe_write
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.prediction_check import PREDICTION_MAX_BYTES
from datasolver.data.layout import PREDICTION_NAME

TaskStatus = Literal["solved", "fallback", "failed", "skipped"]
"""How a task ended: the agent's prediction, the fallback run's, none, or not run (resume)."""
STATUSES: tuple[TaskStatus, ...] = get_args(TaskStatus)


def prediction_path(output_dir: Path, task_id: str) -> Path:
    """Where a task's answer goes: `<output_dir>/<task_id>/prediction.csv`."""
    return Path(output_dir) / task_id / PREDICTION_NAME


def publish_prediction(prediction: Path, output_dir: Path, task_id: str) -> Path:
    """Copy ``prediction`` to `prediction_path` atomically (write beside it, then rename); return that path.

    The source sits where the sandbox writes: opened without following a symlink, size-capped. The
    target is written through `safe_write`: `<output_dir>/<task_id>` must be a real folder and a
    link at the target is replaced, never written through."""
    target = prediction_path(output_dir, task_id)
    with safe_files.open_regular(prediction, max_bytes=PREDICTION_MAX_BYTES) as src, \
            safe_write.replacing(target, base=output_dir) as dst:
        copied = 0
        while chunk := src.read(1 << 20):
            copied += len(chunk)
            if copied > PREDICTION_MAX_BYTES:
                raise UnsafeFile(f"{Path(prediction).name} grew over the {PREDICTION_MAX_BYTES}-byte limit "
                                 "while being copied")
            dst.write(chunk)
    return target


def published_prediction(output_dir: Path, task_id: str) -> Path | None:
    """`prediction_path` when a regular file is there itself (not a link, FIFO or folder), else None.

    For readers of an output folder someone else may have filled (`report --gold`, `replay`):
    whatever a summary or trace names, only this path of the folder given is read."""
    if not safe_write.is_one_name(task_id):
        return None
    path = prediction_path(output_dir, task_id)
    try:
        return path if stat.S_ISREG(os.lstat(path).st_mode) else None
    except OSError:
        return None


def has_prediction(output_dir: Path, task_id: str) -> bool:
    """True when a non-empty prediction is published (an empty file is an interrupted write)."""
    path = prediction_path(output_dir, task_id)
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False
