"""Which files are media, where they sit in a task, and how one is opened: as media, nothing else.

FFmpeg picks its demuxer from a file's content. Left to choose, a `.mp4` that is an FFmpeg concat
script (`ffconcat version 1.0` / `file 'out/x.mp4'`) is read as one and decodes other files, through
a folder link the input check refused or from a FIFO that blocks forever; an HLS or DASH playlist
names segments and URLs. So every media file is opened here with the container format its
extension names (never a playlist or script demuxer) and only the `file` protocol, and a container
that does not match its extension is not read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datasolver.data.input_files import InputScope, walk_inputs
from datasolver.data.layout import TaskFolder

VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm", ".avi")
AUDIO_SUFFIXES = (".mp3", ".wav", ".m4a", ".aac", ".flac")
MEDIA_SUFFIXES = VIDEO_SUFFIXES + AUDIO_SUFFIXES
DEMUXERS = {
    ".mp4": "mov", ".mov": "mov", ".m4a": "mov",  # FFmpeg's mov demuxer reads no external reference (drefs off)
    ".mkv": "matroska", ".webm": "matroska", ".avi": "avi",
    ".mp3": "mp3", ".wav": "wav", ".aac": "aac", ".flac": "flac",
}
"""The one demuxer each media extension is read with: plain containers that open no other file."""
PROTOCOLS = "file"
"""The only protocol FFmpeg may use, for the file itself (no concat:, http:, pipe:, …)."""


def is_media(path: Path) -> bool:
    return path.suffix.lower() in MEDIA_SUFFIXES


def find_media(task_dir: Path) -> list[Path]:
    """Every video and audio file under `task_dir/context/` that the data room's input check
    accepts (regular files inside the task; links out of it only with the opt-in), sorted."""
    folder = TaskFolder(Path(task_dir))
    if not folder.context.is_dir():
        return []
    # The folder's own scope: a checked copy (a scratch made by `place`) may hold no task.json.
    return sorted(p for p in walk_inputs(folder.context, InputScope(folder.root)).files if is_media(p))


def open_media(path: Path) -> Any:
    """`path` opened by PyAV as the container its extension names (`DEMUXERS`), with only the file
    protocol; raises av.FFmpegError (InvalidDataError) when its content is another format, and
    ValueError for an extension that names no media."""
    import av

    demuxer = DEMUXERS.get(Path(path).suffix.lower())
    if demuxer is None:
        raise ValueError(f"{Path(path).name}: not a media file (video: mp4 mov mkv webm avi; audio: mp3 wav m4a "
                         "aac flac)")
    # An absolute path: a relative name such as `concat:a.mp4` would read as a protocol.
    return av.open(str(Path(path).absolute()), format=demuxer, container_options={"protocol_whitelist": PROTOCOLS},
                   metadata_errors="ignore")


def unreadable_note(path: Path, exc: Exception) -> str:
    """Why `path` could not be opened as media, naming the container its extension promised."""
    suffix = Path(path).suffix.lower()
    expected = f"; only the {DEMUXERS[suffix]} container its {suffix} name promises is read" if suffix in DEMUXERS else ""
    return f"not a readable media file{expected} ({type(exc).__name__}: {exc})"
