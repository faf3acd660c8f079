"""Where the pass reads and writes: a scratch's context/ and `derived/video/`, never the raw input."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from datasolver import safe_write
from datasolver.data.layout import ScratchLayout, TaskFolder
from datasolver.data.mirror import mirror_context
from datasolver.video.errors import VideoError

TIMELINE_FILE = "timeline.json"
TEMPORARY_PREFIX = "datasolver-video-"


@dataclass(frozen=True)
class Placement:
    out_dir: Path
    """Frames go to `out_dir/<stem>/`, the report to `out_dir/timeline.json`."""
    image_root: Path | None
    """Image paths in the report are relative to this (the scratch root), else absolute."""
    media: Path
    """What the pass reads: a prepared scratch, a checked copy of a raw task folder, or the one media file."""
    leftover: Path | None = None
    """A temporary folder of this invocation that holds nothing asked for (the checked copy, when
    the outputs go to --out): `placed` removes it."""


def timeline_path(task_scratch_dir: Path) -> Path:
    return ScratchLayout(Path(task_scratch_dir)).video / TIMELINE_FILE


def place(path: Path, out: Path | None = None) -> Placement:
    """Where the pass for `path` (a task dir or a media file) reads and writes, refusing any output
    inside the input.

    A prepared scratch is read as it is. A raw task folder is read through a checked copy, as `run`
    reads its scratch: a temporary scratch whose context/ links only the files the input check
    accepts (so a demuxer that resolves a name beside a media file finds no refused folder link or
    FIFO there). A scratch's derived/video/ (and the temporary scratch's folders) is made here, and
    refused (`UnsafeWrite`) when a link stands on the way: a task folder may ship one."""
    path = Path(path)
    layout = ScratchLayout(path)
    prepared = path.is_dir() and layout.is_prepared()
    if out is None and prepared:
        return Placement(safe_write.make_folders(layout.video, base=path), path, path)
    if out is not None:
        source = (path if path.is_dir() else path.parent).resolve()
        target = Path(out).resolve()
        inside = target == source or source in target.parents
        if inside and not (prepared and layout.derived.resolve() in [target, *target.parents]):
            raise VideoError(f"--out {out} lies inside the input {source}; the input is never written, choose another")
    if prepared:
        return Placement(Path(out), None, path)
    if not path.is_dir():  # one media file the user named: read as it is
        if out is not None:
            return Placement(Path(out), None, path)
        scratch = _temporary(path.stem)
        return Placement(scratch.video, scratch.root, path)
    scratch = _temporary(path.name)
    mirror_context(TaskFolder(path), scratch)
    if out is None:
        return Placement(scratch.video, scratch.root, scratch.root)
    return Placement(Path(out), None, scratch.root, leftover=scratch.root.parent)


@contextlib.contextmanager
def placed(path: Path, out: Path | None = None) -> Iterator[Placement]:
    """`place`, and the checked copy removed when the pass is done where the outputs went to --out
    (nothing the user asked for lies in it)."""
    placement = place(path, out)
    try:
        yield placement
    finally:
        if placement.leftover is not None:
            shutil.rmtree(placement.leftover, ignore_errors=True)


def _temporary(name: str) -> ScratchLayout:
    """`<temp>/datasolver-video-XXXX/<name>`, a folder of this invocation's own (mkdtemp: mode 0700,
    never one that already stood), its derived/video/ made. A fixed `<temp>/…/<name>` was shared:
    two passes over task folders of one name (two terminals, two test workers) mirrored into the
    same context/ and read each other's half-made copy."""
    base = Path(tempfile.mkdtemp(prefix=TEMPORARY_PREFIX))
    scratch = ScratchLayout(base / name)
    safe_write.make_folders(scratch.video, base=base)
    return scratch
