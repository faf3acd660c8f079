"""Where the pass writes: a scratch's `derived/video/`, never into the input."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from datasolver import safe_write
from datasolver.data.layout import ScratchLayout
from datasolver.video.errors import VideoError

TIMELINE_FILE = "timeline.json"
DEFAULT_SCRATCH = "datasolver-scratch"


@dataclass(frozen=True)
class Placement:
    out_dir: Path
    """Frames go to `out_dir/<stem>/`, the report to `out_dir/timeline.json`."""
    image_root: Path | None
    """Image paths in the report are relative to this (the scratch root), else absolute."""


def timeline_path(task_scratch_dir: Path) -> Path:
    return ScratchLayout(Path(task_scratch_dir)).video / TIMELINE_FILE


def place(path: Path, out: Path | None = None) -> Placement:
    """The output folder for `path` (a task dir or a media file), refusing any inside the input.

    A scratch's derived/video/ (and the temporary scratch's folders) is made here, and refused
    (`UnsafeWrite`) when a link stands on the way: a task folder may ship one."""
    path = Path(path)
    layout = ScratchLayout(path)
    if out is None:
        if path.is_dir() and layout.is_prepared():
            return Placement(safe_write.make_folders(layout.video, base=path), path)
        name = path.name if path.is_dir() else path.stem
        scratch = Path(tempfile.gettempdir()) / DEFAULT_SCRATCH / name
        return Placement(safe_write.make_folders(ScratchLayout(scratch).video, base=Path(tempfile.gettempdir())), scratch)
    source = (path if path.is_dir() else path.parent).resolve()
    target = Path(out).resolve()
    inside = target == source or source in target.parents
    if inside and not (path.is_dir() and layout.is_prepared() and layout.derived.resolve() in [target, *target.parents]):
        raise VideoError(f"--out {out} lies inside the input {source}; the input is never written, choose another")
    return Placement(Path(out), None)
