"""Put an accepted prediction where the grader looks: `<output>/<task_id>/prediction.csv`."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREDICTION_NAME = "prediction.csv"


def publish_prediction(prediction: Path, output_dir: Path, task_id: str) -> Path:
    """Copy ``prediction`` into place atomically (a reader never sees half a file); return the path."""
    target = Path(output_dir) / task_id / PREDICTION_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{PREDICTION_NAME}.", suffix=".tmp")
    os.close(fd)
    try:
        shutil.copyfile(prediction, tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
