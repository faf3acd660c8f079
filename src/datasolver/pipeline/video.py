"""The video pass of one prepared task, run in a worker thread (decoding, OCR and ASR are CPU work).

It writes `derived/video/` (frames and timeline.json) into the scratch, where the agent's brief
finds it. Results are cached by file hash across runs (see `datasolver.video.cache`).
"""

from __future__ import annotations

import time
from pathlib import Path

from datasolver.data.layout import ScratchLayout
from datasolver.video import VideoOptions, VideoReport, analyze_path, default_cache_dir, find_media
from datasolver.video.outputs import TIMELINE_FILE, place


def has_media(layout: ScratchLayout) -> bool:
    return bool(find_media(layout.root))


def prepare_task_video(layout: ScratchLayout, *, budget_s: float | None = None, cache_dir: Path | None = None,
                       options: VideoOptions = VideoOptions()) -> VideoReport:
    """Timeline of every media file under context/, saved to derived/video/timeline.json. Blocking.
    (The video room takes a task folder or one media file, so it gets the scratch's root.)"""
    placement = place(layout.root)
    deadline = None if budget_s is None else time.monotonic() + budget_s
    report = analyze_path(placement.media, placement.out_dir, options=options, image_root=placement.image_root,
                          cache_dir=cache_dir if cache_dir is not None else default_cache_dir(), deadline=deadline)
    report.save(placement.out_dir / TIMELINE_FILE)
    return report
