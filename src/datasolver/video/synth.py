"""Synthetic screencasts for tests, the benchmark and the bundled example (no model, no network).

Slides are drawn with Pillow (a CJK font from Debian's fonts-noto-cjk), encoded with PyAV's
bundled libx264, and narrated with espeak-ng when a slide has narration. Each `Slide` is one
visual state; transitions are hard cuts or crossfades, and a slide may carry a moving cursor and
a passing tooltip, the things a real screen recording has that are not state changes.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from datasolver.video.errors import SynthError

CJK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Medium.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
)
AUDIO_RATE = 22050


@dataclass(frozen=True)
class Slide:
    """One visual state: a title and a table of cells, shown for `seconds`."""

    title: str
    rows: tuple[tuple[str, ...], ...] = ()
    seconds: float = 3.0
    transition: Literal["cut", "fade"] = "cut"
    """How this slide replaces the previous one (a fade takes `fade_s` of its time)."""
    cursor: bool = False
    """A mouse pointer moves across the slide during its first second and a half."""
    tooltip: str = ""
    """A tooltip that passes under the moving cursor (needs `cursor`)."""
    narration: str = ""
    """Spoken (espeak-ng) when the slide appears."""
    voice: str = "en-us"


def cjk_font_path() -> Path:
    """The first installed Noto CJK font; SynthError names the Debian package when none is."""
    for candidate in CJK_FONTS:
        if Path(candidate).is_file():
            return Path(candidate)
    raise SynthError("no CJK font: install Debian's fonts-noto-cjk (apt-get install fonts-noto-cjk)")


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


def draw_slide(slide: Slide, size: tuple[int, int], *, cursor_at: tuple[int, int] | None = None,
               tooltip: str = "") -> np.ndarray:
    """The slide as an RGB array (height, width, 3)."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = size
    scale = height / 360
    font = ImageFont.truetype(str(cjk_font_path()), max(12, int(22 * scale)))
    title_font = ImageFont.truetype(str(cjk_font_path()), max(14, int(30 * scale)))
    image = Image.new("RGB", size, (250, 250, 247))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, int(56 * scale)), fill=(32, 64, 120))
    draw.text((int(20 * scale), int(10 * scale)), slide.title, font=title_font, fill=(255, 255, 255))
    columns = max((len(r) for r in slide.rows), default=1)
    cell_w = (width - int(40 * scale)) // columns
    y = int(80 * scale)
    for i, row in enumerate(slide.rows):
        if i % 2 == 0:
            draw.rectangle((int(20 * scale), y - int(4 * scale), width - int(20 * scale), y + int(34 * scale)),
                           fill=(232, 238, 246))
        for j, cell in enumerate(row):
            draw.text((int(30 * scale) + j * cell_w, y), cell, font=font, fill=(20, 20, 20))
        y += int(44 * scale)
    if cursor_at is not None:
        x0, y0 = cursor_at
        if tooltip:
            box = draw.textbbox((x0 + 16, y0 + 20), tooltip, font=font)
            draw.rectangle((box[0] - 6, box[1] - 4, box[2] + 6, box[3] + 4), fill=(255, 255, 210), outline=(90, 90, 90))
            draw.text((x0 + 16, y0 + 20), tooltip, font=font, fill=(0, 0, 0))
        arrow = [(x0, y0), (x0, y0 + int(18 * scale)), (x0 + int(5 * scale), y0 + int(13 * scale)),
                 (x0 + int(12 * scale), y0 + int(13 * scale))]
        draw.polygon(arrow, fill=(0, 0, 0), outline=(255, 255, 255))
    return np.asarray(image, dtype=np.uint8)


def make_screencast(path: Path, slides: list[Slide], *, size: tuple[int, int] = (640, 360), fps: int = 10,
                    fade_s: float = 0.8, gop_s: float = 10.0, audio: bool | None = None) -> list[float]:
    """Encode `slides` into `path` (mp4/mkv by suffix); return each slide's start time in seconds.

    Audio (AAC, mono) is added when a slide has narration and espeak-ng is installed, or when
    `audio` is True (silence where nothing is said); `audio=False` never adds it.
    """
    import av

    starts, t = [], 0.0
    for slide in slides:
        starts.append(t)
        t += slide.seconds
    total_frames = int(round(t * fps))
    narrated = any(s.narration for s in slides)
    if narrated and audio is not False and not espeak_available():
        raise SynthError("slides have narration but espeak-ng is missing (apt-get install espeak-ng)")
    with_audio = audio if audio is not None else narrated
    soundtrack = _soundtrack(slides, starts, t) if with_audio else None

    container = av.open(str(path), mode="w")
    stream = container.add_stream("libx264", rate=fps)
    stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
    stream.options = {"crf": "26", "preset": "veryfast", "g": str(int(gop_s * fps))}
    audio_stream = container.add_stream("aac", rate=AUDIO_RATE, layout="mono") if soundtrack is not None else None
    cache: dict[int, np.ndarray] = {}
    for n in range(total_frames):
        now = n / fps
        index = max(i for i, s in enumerate(starts) if s <= now + 1e-9)
        slide, local = slides[index], now - starts[index]
        frame = _frame(slide, local, size, cache, index)
        if slide.transition == "fade" and index > 0 and local < fade_s:
            before = cache.get(index - 1)
            if before is None:
                before = cache[index - 1] = draw_slide(slides[index - 1], size)
            alpha = local / fade_s
            frame = (before * (1 - alpha) + frame * alpha).astype(np.uint8)
        for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    if audio_stream is not None and soundtrack is not None:
        _encode_audio(container, audio_stream, soundtrack)
    container.close()
    return starts


def _frame(slide: Slide, local: float, size: tuple[int, int], cache: dict[int, np.ndarray], index: int) -> np.ndarray:
    if slide.cursor and local < 1.5:
        progress = local / 1.5
        at = (int(size[0] * (0.15 + 0.6 * progress)), int(size[1] * (0.3 + 0.4 * progress)))
        tip = slide.tooltip if slide.tooltip and 0.4 <= local < 1.0 else ""
        return draw_slide(slide, size, cursor_at=at, tooltip=tip)
    if index not in cache:
        cache[index] = draw_slide(slide, size)
    return cache[index]


def speak(text: str, voice: str = "en-us") -> np.ndarray:
    """espeak-ng's speech for `text` as float32 mono samples at AUDIO_RATE."""
    with tempfile.TemporaryDirectory() as tmp:
        wav = Path(tmp) / "speech.wav"
        done = subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(wav), text],
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise SynthError(f"espeak-ng failed: {done.stderr.strip()}")
        with wave.open(str(wav)) as w:
            rate, data = w.getframerate(), w.readframes(w.getnframes())
    samples = np.frombuffer(data, dtype=np.int16).astype(np.float32) / 32768.0
    if rate != AUDIO_RATE:
        positions = np.linspace(0, len(samples) - 1, int(len(samples) * AUDIO_RATE / rate))
        samples = np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)
    return samples


def _soundtrack(slides: list[Slide], starts: list[float], total_s: float) -> np.ndarray:
    track = np.zeros(int(total_s * AUDIO_RATE) + 1, dtype=np.float32)
    for slide, start in zip(slides, starts):
        if not slide.narration:
            continue
        voice = speak(slide.narration, slide.voice)
        at = int((start + 0.2) * AUDIO_RATE)
        end = min(len(track), at + len(voice))
        track[at:end] += voice[: end - at]
    return np.clip(track, -1.0, 1.0)


def _encode_audio(container, stream, samples: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    import av

    chunk, pts = 1024, 0
    for i in range(0, len(samples), chunk):
        part = samples[i:i + chunk]
        frame = av.AudioFrame.from_ndarray(part.reshape(1, -1), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = AUDIO_RATE, pts
        pts += len(part)
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
