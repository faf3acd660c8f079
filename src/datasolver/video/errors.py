"""The video room's exceptions."""

from __future__ import annotations

from datasolver.errors import DatasolverError


class VideoError(DatasolverError):
    """A media file or folder cannot be analysed (the message says which and why)."""


class MediaUnreadable(VideoError):
    """The file is not media PyAV can open, or it has neither a video nor an audio stream."""


class SynthError(VideoError):
    """A test screencast cannot be made (no CJK font, no espeak-ng)."""
