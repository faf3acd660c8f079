"""The video room: media files → time-aligned evidence (keyframes, their text and layout, speech).

It knows nothing of agents or models' prompts: `agent/` renders its timeline. Heavy dependencies
(PyAV, rapidocr, faster-whisper; the `video` install extra) are imported only when a pass runs.
"""

from datasolver.video.analyze import VideoOptions, analyze_path
from datasolver.video.cache import default_cache_dir
from datasolver.video.media import find_media
from datasolver.video.numbers import unsupported_numbers
from datasolver.video.timeline import VideoReport, render_report

__all__ = [
    "VideoOptions", "VideoReport", "analyze_path", "default_cache_dir", "find_media", "render_report",
    "unsupported_numbers",
]
