"""Keyframe candidates: one decode pass that watches pixels, packet sizes and keyframes.

Three detectors are united, because each misses what another sees (measurements in docs/video.md):
- pixel differencing: every 1/`sample_fps` s the frame is shrunk to 160×90 grey and compared with
  the previous sample; when a change has settled (a still sample follows), the frame `settle_s`
  later is grabbed. Continuous motion grabs a frame every `max_wait_s`.
- packet bursts: video packets over `burst_factor`× the median size mark a change the encoder had
  to pay for;
- keyframes that break the periodic keyframe rhythm (an encoder's scene cut).
A burst or an irregular keyframe with no pixel candidate near it is grabbed in a second, seeking
pass. Candidates that are pixel-identical to the one kept before are dropped here; dropping by
text (OCR tokens) is the caller's job.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from datasolver.settings import amount, check_settings, count, seconds, setting
from datasolver.video.errors import MediaUnreadable
from datasolver.video.media import open_media


@dataclass(frozen=True)
class DetectorSettings:
    """Knobs of the detector; the defaults are the ones measured in docs/video.md."""

    sample_fps: float = amount(4.0, "frames compared per second of video", above=0)
    thumb_size: tuple[int, int] = setting((160, 90), "the grey thumbnail each sample is shrunk to, pixels")
    pixel_delta: int = count(12, "a thumbnail pixel counts as changed when its grey level moves by more than this",
                             least=0)
    still_fraction: float = amount(0.0002, "at most this fraction of changed thumbnail pixels is 'still' (≤ 2 of "
                                   "14,400)", least=0, most=1)
    settle_s: float = amount(0.25, "after a change settles, the frame this many seconds later is grabbed", least=0)
    max_wait_s: float = seconds(3.0, "motion that never settles grabs a frame this often, seconds")
    burst_factor: float = amount(3.0, "a packet this many times the median non-key packet is a burst", above=0)
    near_s: float = amount(1.0, "a burst or keyframe within this of a pixel candidate is already covered, seconds",
                           least=0)
    max_candidates: int = count(400, "past this many changes reading stops (a note says so)")

    def __post_init__(self) -> None:
        check_settings(self)


@dataclass
class Candidate:
    """A grabbed frame: its time, why it was grabbed, its RGB pixels and its thumbnail."""

    time_s: float
    reason: str  # pixels | burst | keyframe | start | end
    image: np.ndarray
    thumb: np.ndarray
    change: float = 1.0
    """Fraction of thumbnail pixels that differ from the previous kept candidate."""


@dataclass
class Scan:
    """What one pass over a video found."""

    duration_s: float
    width: int
    height: int
    candidates: list[Candidate] = field(default_factory=list)
    events: list[tuple[float, str]] = field(default_factory=list)
    """Burst and irregular-keyframe times that no pixel candidate covered (grabbed by seeking)."""
    notes: list[str] = field(default_factory=list)


def changed_fraction(a: np.ndarray, b: np.ndarray, delta: int) -> float:
    """Fraction of pixels whose grey level differs by more than `delta`."""
    diff = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return float(np.count_nonzero(diff > delta)) / diff.size


def _thumb(frame, size: tuple[int, int]) -> np.ndarray:  # type: ignore[no-untyped-def]
    return frame.reformat(width=size[0], height=size[1], format="gray").to_ndarray()


def _rgb(frame, max_side: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    w, h = frame.width, frame.height
    scale = min(1.0, max_side / max(w, h))
    if scale < 1.0:
        frame = frame.reformat(width=int(w * scale) // 2 * 2, height=int(h * scale) // 2 * 2)
    return frame.to_ndarray(format="rgb24")


def scan_video(path: Path, settings: DetectorSettings = DetectorSettings(), *, deadline: float | None = None,
               max_side: int = 1920) -> Scan:
    """Decode `path` once, grab candidates; raise MediaUnreadable when it has no decodable video."""
    import av

    try:
        container = open_media(path)
    except (av.FFmpegError, OSError, UnicodeDecodeError) as exc:
        raise MediaUnreadable(f"{path.name}: not a readable media file ({exc})") from exc
    with container:
        if not container.streams.video:
            raise MediaUnreadable(f"{path.name}: no video stream")
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        scan = Scan(duration_s=_duration(container, stream), width=stream.width or 0, height=stream.height or 0)
        packets: list[tuple[float, int, bool]] = []
        watcher = _PixelWatcher(settings)
        last = None
        try:
            for packet in container.demux(stream):
                if packet.size and packet.pts is not None and packet.time_base is not None:
                    packets.append((float(packet.pts * packet.time_base), packet.size, bool(packet.is_keyframe)))
                for frame in packet.decode():
                    last = frame
                    t = float(frame.time or 0.0)
                    watcher.see(frame, t, lambda reason, f=frame, tt=t: _keep(scan, settings, f, tt, reason, max_side))
                if deadline is not None and last is not None and time.monotonic() > deadline:
                    scan.notes.append(f"time budget spent: video read up to {_clock(watcher.now)} of "
                                      f"{_clock(scan.duration_s)}")
                    break
                if len(scan.candidates) >= settings.max_candidates:
                    scan.notes.append(f"more than {settings.max_candidates} changes: reading stopped at "
                                      f"{_clock(watcher.now)}")
                    break
        except av.FFmpegError as exc:
            scan.notes.append(f"decoding stopped at {_clock(watcher.now)}: {exc}")
        if last is None:
            raise MediaUnreadable(f"{path.name}: the video stream has no decodable frame")
        if watcher.pending_end():
            _keep(scan, settings, last, float(last.time or watcher.now), "end", max_side)
        if scan.duration_s <= 0:
            scan.duration_s = watcher.now
    scan.events = _uncovered(packet_events(packets, settings), scan.candidates, settings)
    if scan.events and (deadline is None or time.monotonic() < deadline):
        _grab_at(path, scan, settings, max_side)
    scan.candidates.sort(key=lambda c: c.time_s)
    return scan


class _PixelWatcher:
    """The pixel-differencing state machine, fed every decoded frame."""

    def __init__(self, settings: DetectorSettings) -> None:
        self.s = settings
        self.step = 1.0 / settings.sample_fps
        self.next_sample = 0.0
        self.prev: np.ndarray | None = None
        self.changing_since: float | None = None
        self.grab_at: float | None = None
        self.now = 0.0

    def see(self, frame, t: float, grab) -> None:  # type: ignore[no-untyped-def]
        self.now = t
        if self.grab_at is not None and t + 1e-6 >= self.grab_at:
            self.grab_at = None
            grab("pixels")
        if t + 1e-6 < self.next_sample:
            return
        while self.next_sample <= t + 1e-6:
            self.next_sample += self.step
        thumb = _thumb(frame, self.s.thumb_size)
        moving = self.prev is None or changed_fraction(self.prev, thumb, self.s.pixel_delta) > self.s.still_fraction
        self.prev = thumb
        if moving:
            if self.changing_since is None:
                self.changing_since = t
            elif t - self.changing_since >= self.s.max_wait_s and self.grab_at is None:
                self.changing_since = t  # continuous motion: take what is on screen now
                grab("pixels")
        elif self.changing_since is not None:
            self.changing_since = None
            self.grab_at = t + self.s.settle_s

    def pending_end(self) -> bool:
        return self.changing_since is not None or self.grab_at is not None


def _keep(scan: Scan, settings: DetectorSettings, frame, t: float, reason: str, max_side: int) -> None:  # type: ignore[no-untyped-def]
    """Add a candidate unless it is pixel-identical to the last kept one."""
    thumb = _thumb(frame, settings.thumb_size)
    change = 1.0
    if scan.candidates:
        change = changed_fraction(scan.candidates[-1].thumb, thumb, settings.pixel_delta)
        if change <= settings.still_fraction:
            return
    scan.candidates.append(Candidate(round(t, 2), reason, _rgb(frame, max_side), thumb, change))


def packet_events(packets: list[tuple[float, int, bool]], settings: DetectorSettings) -> list[tuple[float, str]]:
    """Times of packet bursts and of keyframes off the periodic rhythm, with what each is ("burst",
    "keyframe"), from (time, size, is keyframe) per video packet: the second and third detector."""
    if len(packets) < 3:
        return []
    packets = sorted(packets)
    keyframes = [t for t, _, key in packets if key]
    gaps = [round(b - a, 1) for a, b in zip(keyframes, keyframes[1:])]
    period, count = Counter(gaps).most_common(1)[0] if gaps else (0.0, 0)
    events: list[tuple[float, str]] = []
    rhythm = keyframes[0] if keyframes else 0.0  # the last keyframe on the periodic rhythm
    for prev, t in zip(keyframes, keyframes[1:]):
        # periodic: one period after the previous keyframe (encoders that restart the period at a
        # scene cut) or after the last periodic one (encoders with a fixed period)
        if count >= 2 and min(abs(t - prev - period), abs(t - rhythm - period)) <= 0.15:
            rhythm = t
        else:
            events.append((t, "keyframe"))
    median = statistics.median(size for _, size, key in packets if not key) if any(
        not key for _, _, key in packets) else 0
    threshold = settings.burst_factor * median
    last_burst = -10.0
    for t, size, key in packets:
        if not key and median and size > threshold:
            if t - last_burst > 0.5:
                events.append((t, "burst"))
            last_burst = t
    return sorted(events)


def _uncovered(events: list[tuple[float, str]], candidates: list[Candidate],
               settings: DetectorSettings) -> list[tuple[float, str]]:
    times = [c.time_s for c in candidates]
    out: list[tuple[float, str]] = []
    for t, reason in events:
        if any(t - settings.near_s <= c <= t + settings.max_wait_s + settings.near_s for c in times):
            continue
        if out and t - out[-1][0] < settings.near_s:
            continue
        out.append((t, reason))
    return out


def _grab_at(path: Path, scan: Scan, settings: DetectorSettings, max_side: int) -> None:
    """The second pass: seek to each uncovered event and grab the frame once it has settled."""
    import av

    with open_media(path) as container:
        stream = container.streams.video[0]
        for t, reason in scan.events:
            target = t + settings.settle_s + 0.5
            try:
                container.seek(int(max(t - 0.1, 0) / stream.time_base), stream=stream, backward=True)
                for frame in container.decode(stream):
                    if float(frame.time or 0) + 1e-6 >= target:
                        _insert(scan, settings, frame, float(frame.time or 0), reason, max_side)
                        break
            except av.FFmpegError as exc:
                scan.notes.append(f"could not seek to {_clock(t)}: {exc}")


def _insert(scan: Scan, settings: DetectorSettings, frame, t: float, reason: str, max_side: int) -> None:  # type: ignore[no-untyped-def]
    thumb = _thumb(frame, settings.thumb_size)
    before = [c for c in scan.candidates if c.time_s <= t]
    change = changed_fraction(before[-1].thumb, thumb, settings.pixel_delta) if before else 1.0
    if change <= settings.still_fraction:
        return
    scan.candidates.append(Candidate(round(t, 2), reason, _rgb(frame, max_side), thumb, change))


def _duration(container, stream) -> float:  # type: ignore[no-untyped-def]
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return 0.0


def _clock(seconds: float) -> str:
    minutes, secs = divmod(max(seconds, 0.0), 60)
    return f"{int(minutes):02d}:{secs:04.1f}"
