"""The video pass over one media file or a task's media: keyframes, their text, speech, by time."""

from __future__ import annotations

import io
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from datasolver import safe_write
from datasolver.settings import check_settings, count, setting, switch
from datasolver.video import cache
from datasolver.video.errors import MediaUnreadable, VideoError
from datasolver.video.keyframes import Candidate, DetectorSettings, changed_fraction, scan_video
from datasolver.video.layout import group_rows, has_new_token, layout_text, reading_text, tokens
from datasolver.video.media import find_media, is_media, open_media, unreadable_note
from datasolver.video.ocr import ocr_available, read_text
from datasolver.video.speech import find_model, has_audio, transcribe
from datasolver.video.timeline import Frame, MediaTimeline, Speech, VideoReport, clock

PASS_VERSION = 1
MAX_FRAMES = 60
# Without OCR, a candidate must differ from the last kept frame by more than cursor motion does.
NO_OCR_MIN_CHANGE = 0.002
# Losing text keeps a frame only with a visible change (a cleared panel, not a passing tooltip's end).
LOST_TEXT_MIN_CHANGE = 0.01


@dataclass(frozen=True)
class VideoOptions:
    """What the pass does; part of the cache key."""

    ocr: bool = switch(True, "read the text of each kept frame (when an OCR engine is installed)")
    asr: bool = switch(True, "transcribe speech (when a speech model is installed)")
    max_frames: int = count(MAX_FRAMES, "past this many states the biggest changes are kept")
    max_side: int = count(1920, "frames are stored at most this many pixels wide")
    detector: DetectorSettings = setting(doc="the keyframe detector's knobs", factory=DetectorSettings)

    def __post_init__(self) -> None:
        check_settings(self)

    def key(self) -> dict[str, object]:
        return {"version": PASS_VERSION, **asdict(self)}


def analyze_path(path: Path, out_dir: Path, *, options: VideoOptions = VideoOptions(), image_root: Path | None = None,
                 cache_dir: Path | None = None, deadline: float | None = None) -> VideoReport:
    """Every media file of `path` (a task dir: its context/; or one file) into `out_dir/<stem>/`."""
    path = Path(path)
    if path.is_file():
        if not is_media(path):
            raise VideoError(f"{path} is not a media file (video: mp4 mov mkv webm avi; audio: mp3 wav m4a aac flac)")
        files, base = [path], path.parent
    elif path.is_dir():
        files, base = find_media(path), path
    else:
        raise VideoError(f"{path} does not exist")
    report, used = VideoReport(), set()
    for media in files:
        stem = media.stem
        n = 2
        while stem in used:
            stem, n = f"{media.stem}_{n}", n + 1
        used.add(stem)
        source = os.path.relpath(media, base) if path.is_dir() else media.name
        report.videos.append(analyze_media(media, out_dir / stem, source=source, options=options,
                                           image_root=image_root, cache_dir=cache_dir, deadline=deadline))
    return report


def analyze_media(path: Path, frames_dir: Path, *, source: str, options: VideoOptions = VideoOptions(),
                  image_root: Path | None = None, cache_dir: Path | None = None,
                  deadline: float | None = None) -> MediaTimeline:
    """One file's timeline; a file that cannot be read gives a timeline with a note, never an exception."""
    try:
        size = path.stat().st_size
        if size == 0:
            return MediaTimeline(source, 0.0, notes=["empty file: nothing to read"])
        key = cache.cache_key(cache.file_digest(path), options.key())
    except OSError as exc:
        return MediaTimeline(source, 0.0, notes=[f"cannot read the file: {exc}"])
    hit = cache.lookup(cache_dir, key)
    if hit is not None:
        return _from_cache(hit, frames_dir, source, image_root)
    timeline = _analyze(path, frames_dir, source, options, image_root, deadline)
    if not any(n.startswith("time budget") for n in timeline.notes):
        frames = [frames_dir / Path(f.image).name for f in timeline.frames]
        cache.store(cache_dir, key, timeline.to_json(), frames)
    return timeline


def _analyze(path: Path, frames_dir: Path, source: str, options: VideoOptions, image_root: Path | None,
             deadline: float | None) -> MediaTimeline:
    import av

    try:
        with open_media(path) as container:
            has_video = bool(container.streams.video)
            audio = bool(container.streams.audio)
            duration = (container.duration or 0) / 1_000_000
    except (av.FFmpegError, OSError, UnicodeDecodeError) as exc:
        return MediaTimeline(source, 0.0, notes=[unreadable_note(path, exc)])
    if not has_video and not audio:
        return MediaTimeline(source, round(duration, 2), notes=["no video or audio stream"])
    timeline = MediaTimeline(source, round(duration, 2))
    if has_video:
        try:
            _keyframes(path, frames_dir, timeline, options, image_root, deadline)
        except MediaUnreadable as exc:
            timeline.notes.append(str(exc))
    else:
        timeline.notes.append("audio only: no frames")
    if not audio:
        timeline.notes.append("no audio track: no speech")
    elif not options.asr:
        timeline.notes.append("ASR off (--no-asr): speech skipped")
    else:
        _speech(path, timeline, deadline)
    return timeline


def _keyframes(path: Path, frames_dir: Path, timeline: MediaTimeline, options: VideoOptions,
               image_root: Path | None, deadline: float | None) -> None:
    scan = scan_video(path, options.detector, deadline=deadline, max_side=options.max_side)
    timeline.duration_s = round(scan.duration_s or timeline.duration_s, 2)
    timeline.notes += scan.notes
    if scan.width * scan.height > 1920 * 1088:
        timeline.notes.append(f"{scan.width}x{scan.height} video: frames stored at most {options.max_side} px wide")
    why_no_ocr = None if options.ocr else "OCR off (--no-ocr)"
    if why_no_ocr is None:
        why_no_ocr = ocr_available()
    if why_no_ocr:
        timeline.notes.append(f"{why_no_ocr}: frames kept by pixel change only, so a single changed value "
                              "may be missed")
    kept = _dedupe(scan.candidates, timeline, options, deadline, use_ocr=why_no_ocr is None)
    if len(kept) > options.max_frames:
        kept = _cap(kept, options.max_frames, options.detector)
        timeline.notes.append(f"more than {options.max_frames} states: kept the {options.max_frames} biggest changes")
    _write_frames(kept, frames_dir, timeline, image_root)


@dataclass
class _Read:
    candidate: Candidate
    text: str = ""
    layout: str = ""


def _dedupe(candidates: list[Candidate], timeline: MediaTimeline, options: VideoOptions, deadline: float | None,
            *, use_ocr: bool) -> list[_Read]:
    kept: list[_Read] = []
    skipped_ocr = 0
    for candidate in candidates:
        change = changed_fraction(kept[-1].candidate.thumb, candidate.thumb, options.detector.pixel_delta) if kept else 1.0
        if kept and change <= options.detector.still_fraction:
            continue
        if use_ocr and (deadline is None or time.monotonic() < deadline):
            rows = group_rows(read_text(candidate.image))
            read = _Read(candidate, reading_text(rows), layout_text(rows))
            if kept and not _new_state(read, kept[-1], change):
                continue
        else:
            if use_ocr:
                skipped_ocr += 1
            if kept and change <= NO_OCR_MIN_CHANGE:
                continue
            read = _Read(candidate)
        read.candidate.change = change
        kept.append(read)
    if skipped_ocr:
        timeline.notes.append(f"time budget spent: {skipped_ocr} frames kept without OCR")
    return kept


def _new_state(read: _Read, last: _Read, change: float) -> bool:
    """A candidate is a new state when it shows a new token, or loses text with a visible change."""
    if has_new_token(read.text, last.text):
        return True
    lost = {t for t in tokens(last.text) - tokens(read.text) if len(t) >= 2}
    return bool(lost) and change > LOST_TEXT_MIN_CHANGE


def _cap(kept: list[_Read], limit: int, settings: DetectorSettings) -> list[_Read]:
    """Keep the first and last frames and the biggest changes between them, in time order."""
    inner = sorted(range(1, len(kept) - 1), key=lambda i: kept[i].candidate.change, reverse=True)[: limit - 2]
    chosen = sorted({0, len(kept) - 1, *inner})
    return [kept[i] for i in chosen]


def _write_frames(kept: list[_Read], frames_dir: Path, timeline: MediaTimeline, image_root: Path | None) -> None:
    from PIL import Image

    _empty_frames_dir(frames_dir)
    for i, read in enumerate(kept, 1):
        name = f"frame_{i:02d}_{_stamp(read.candidate.time_s)}.png"
        png = io.BytesIO()
        Image.fromarray(read.candidate.image).save(png, format="PNG", optimize=False, compress_level=3)
        safe_write.write_file(frames_dir / name, png.getvalue(), base=frames_dir.parent)
        timeline.frames.append(Frame(read.candidate.time_s, _shown(frames_dir / name, image_root), read.text,
                                     read.layout))


def _speech(path: Path, timeline: MediaTimeline, deadline: float | None) -> None:
    model, why = find_model()
    if model is None:
        timeline.notes.append(why)
        return
    try:
        segments, notes = transcribe(path, model, deadline=deadline)
    except Exception as exc:  # a broken audio track must not cost the frames
        timeline.notes.append(f"speech failed ({type(exc).__name__}: {exc})")
        return
    timeline.speech = [Speech(s.start_s, s.end_s, s.text) for s in segments]
    timeline.notes += notes


def _from_cache(entry: Path, frames_dir: Path, source: str, image_root: Path | None) -> MediaTimeline:
    import json

    timeline = MediaTimeline.from_json(json.loads((entry / cache.TIMELINE).read_text(encoding="utf-8")))
    timeline.source = source
    _empty_frames_dir(frames_dir)
    for frame in timeline.frames:
        name = Path(frame.image).name
        safe_write.write_file(frames_dir / name, (entry / name).read_bytes(), base=frames_dir.parent)
        frame.image = _shown(frames_dir / name, image_root)
    return timeline


def _empty_frames_dir(frames_dir: Path) -> None:
    """Make `frames_dir` (a link there is refused, never followed) without an earlier run's frames."""
    safe_write.make_folders(frames_dir, base=frames_dir.parent)
    for old in frames_dir.glob("frame_*.png"):
        safe_write.remove(old)


def _stamp(seconds: float) -> str:
    minutes, secs = divmod(seconds, 60)
    return f"{int(minutes):02d}m{secs:04.1f}s"


def _shown(path: Path, image_root: Path | None) -> str:
    if image_root is not None:
        try:
            return path.resolve().relative_to(Path(image_root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


__all__ = ["VideoOptions", "analyze_media", "analyze_path", "clock"]
