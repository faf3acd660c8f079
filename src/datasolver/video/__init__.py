"""The video room: media files → time-aligned evidence (keyframes, their text and layout, speech).

It knows nothing of agents or models' prompts: `agent/` renders its timeline. Heavy dependencies
(PyAV, rapidocr, faster-whisper; the `video` install extra) are imported only when a pass runs.
"""

from datasolver.video.analyze import VideoOptions, analyze_media, analyze_path
from datasolver.video.cache import default_cache_dir
from datasolver.video.errors import MediaUnreadable, SynthError, VideoError
from datasolver.video.keyframes import DetectorSettings
from datasolver.video.media import AUDIO_SUFFIXES, MEDIA_SUFFIXES, VIDEO_SUFFIXES, find_media, is_media
from datasolver.video.numbers import numbers_in, unsupported_numbers
from datasolver.video.timeline import Frame, MediaTimeline, Speech, VideoReport, render_report, render_timeline

__all__ = [
    "AUDIO_SUFFIXES", "MEDIA_SUFFIXES", "VIDEO_SUFFIXES", "DetectorSettings", "Frame", "MediaTimeline",
    "MediaUnreadable", "Speech", "SynthError", "VideoError", "VideoOptions", "VideoReport", "analyze_media",
    "analyze_path", "default_cache_dir", "find_media", "is_media", "numbers_in", "render_report",
    "render_timeline", "unsupported_numbers",
]
