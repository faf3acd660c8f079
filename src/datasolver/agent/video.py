"""Video evidence for the Solver's prompt: the video room's timeline as text, keyframes as images.

The video pass (pipeline, prepare stage) leaves `derived/video/timeline.json` in the scratch; this
module only reads and renders it. Images go to vision-capable endpoints as OpenAI `image_url`
parts with base64 data URLs (JPEG, long side at most `max_side`).
"""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from datasolver.video import VideoReport, render_report
from datasolver.video.outputs import timeline_path


def load_video_report(task_scratch_dir: Path) -> VideoReport | None:
    """The timeline the video pass wrote, or None when the task has no media (or no pass ran)."""
    path = timeline_path(task_scratch_dir)
    if not path.is_file():
        return None
    report = VideoReport.load(path)
    return report if report.videos else None


def timeline_text(report: VideoReport) -> str:
    return render_report(report)


def frame_paths(report: VideoReport, task_scratch_dir: Path) -> tuple[Path, ...]:
    """Every keyframe's PNG, in the report's order (relative paths are under the scratch)."""
    paths = []
    for video in report.videos:
        for frame in video.frames:
            path = Path(frame.image)
            paths.append(path if path.is_absolute() else Path(task_scratch_dir) / path)
    return tuple(p for p in paths if p.is_file())


def pick_frames(paths: tuple[Path, ...], limit: int) -> tuple[Path, ...]:
    """At most `limit` frames spread evenly over the list, the first and the last always among them."""
    if limit <= 0:
        return ()
    if len(paths) <= limit:
        return paths
    if limit == 1:
        return (paths[-1],)
    step = (len(paths) - 1) / (limit - 1)
    return tuple(paths[round(i * step)] for i in range(limit))


def image_part(path: Path, max_side: int = 1280) -> dict[str, Any]:
    """One OpenAI `image_url` content part: the image as a JPEG data URL, long side ≤ max_side."""
    from PIL import Image

    with Image.open(path) as image:
        image = image.convert("RGB")
        image.thumbnail((max_side, max_side))
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG", quality=85)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}}


def user_content(text: str, images: tuple[Path, ...], max_side: int = 1280) -> str | list[dict[str, Any]]:
    """The text alone, or a text part followed by one image part per frame."""
    if not images:
        return text
    return [{"type": "text", "text": text}, *(image_part(p, max_side) for p in images)]
