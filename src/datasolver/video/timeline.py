"""The video room's result: per media file, keyframes with their text and speech segments, by time."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from datasolver import safe_write


@dataclass
class Frame:
    time_s: float
    image: str
    """Path of the PNG, relative to the scratch root when it lies inside one."""
    text: str = ""
    layout: str = ""


@dataclass
class Speech:
    start_s: float
    end_s: float
    text: str


@dataclass
class MediaTimeline:
    """One media file: `source` as given (relative to the task dir when inside one)."""

    source: str
    duration_s: float
    frames: list[Frame] = field(default_factory=list)
    speech: list[Speech] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "duration_s": self.duration_s,
                "frames": [asdict(f) for f in self.frames], "speech": [asdict(s) for s in self.speech],
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MediaTimeline:
        return cls(str(data["source"]), float(data["duration_s"]),
                   [Frame(**f) for f in data.get("frames", [])], [Speech(**s) for s in data.get("speech", [])],
                   list(data.get("notes", [])))


@dataclass
class VideoReport:
    """Every media file of a task (or the one file given)."""

    videos: list[MediaTimeline] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"videos": [v.to_json() for v in self.videos]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VideoReport:
        return cls([MediaTimeline.from_json(v) for v in data.get("videos", [])])

    def save(self, path: Path) -> None:
        safe_write.write_file(path, json.dumps(self.to_json(), ensure_ascii=False, indent=1))

    @classmethod
    def load(cls, path: Path) -> VideoReport:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def clock(seconds: float) -> str:
    """mm:ss.s"""
    minutes, secs = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{secs:04.1f}"


def render_timeline(video: MediaTimeline, *, with_images: bool = True) -> str:
    """Frames and speech interleaved by time, as readable text (the CLI's and the prompt's form)."""
    lines = [f"## {video.source} ({clock(video.duration_s)}, {len(video.frames)} keyframes, "
             f"{len(video.speech)} speech segments)"]
    lines += [f"note: {n}" for n in video.notes]
    events: list[tuple[float, int, list[str]]] = []
    for i, frame in enumerate(video.frames, 1):
        head = f"[{clock(frame.time_s)}] FRAME {i}" + (f" ({frame.image})" if with_images else "")
        body = [head]
        if frame.layout:
            body += ["  " + line for line in frame.layout.splitlines()]
        elif frame.text:
            body.append("  " + frame.text)
        else:
            body.append("  (no text read)")
        events.append((frame.time_s, 0, body))
    for s in video.speech:
        events.append((s.start_s, 1, [f"[{clock(s.start_s)}–{clock(s.end_s)}] SPEECH: {s.text}"]))
    for _, _, body in sorted(events, key=lambda e: (e[0], e[1])):
        lines += body
    return "\n".join(lines)


def render_report(report: VideoReport, *, with_images: bool = True) -> str:
    return "\n\n".join(render_timeline(v, with_images=with_images) for v in report.videos)
