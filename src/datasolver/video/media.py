"""Which files are media, and where they sit in a task."""

from __future__ import annotations

from pathlib import Path

from datasolver.data.input_files import walk_inputs
from datasolver.data.layout import TaskFolder

VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm", ".avi")
AUDIO_SUFFIXES = (".mp3", ".wav", ".m4a", ".aac", ".flac")
MEDIA_SUFFIXES = VIDEO_SUFFIXES + AUDIO_SUFFIXES


def is_media(path: Path) -> bool:
    return path.suffix.lower() in MEDIA_SUFFIXES


def is_audio_only(path: Path) -> bool:
    return path.suffix.lower() in AUDIO_SUFFIXES


def find_media(task_dir: Path) -> list[Path]:
    """Every video and audio file under `task_dir/context/` that the data room's input check
    accepts (regular files inside the task; links out of it only with the opt-in), sorted."""
    context = TaskFolder(Path(task_dir)).context
    if not context.is_dir():
        return []
    return sorted(p for p in walk_inputs(context).files if is_media(p))
