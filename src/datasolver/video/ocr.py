"""Text boxes of one frame from rapidocr (PP-OCR models shipped inside its wheel, run by onnxruntime).

The engine is loaded once per process on first use; `ocr_available()` says whether it can be.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MIN_SCORE = 0.5
_LOCK = threading.Lock()


@dataclass(frozen=True)
class TextBox:
    """One recognised text line and its axis-aligned box in pixels."""

    text: str
    score: float
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def height(self) -> float:
        return self.y1 - self.y0


def ocr_available() -> str | None:
    """None when OCR can run, else why not (for a note)."""
    try:
        import rapidocr  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as exc:
        return f"OCR unavailable ({exc.name} not installed: pip install 'datasolver[video]')"
    return None


@lru_cache(maxsize=1)
def _engine():  # type: ignore[no-untyped-def]
    from rapidocr import RapidOCR

    threads = int(os.environ.get("DATASOLVER_OCR_THREADS", "0")) or min(os.cpu_count() or 1, 4)
    engine = RapidOCR(params={
        "Global.log_level": "warning",
        "Global.use_cls": False,  # screen text is upright
        "EngineConfig.onnxruntime.intra_op_num_threads": threads,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    })
    logging.getLogger("RapidOCR").setLevel(logging.WARNING)
    return engine


def read_text(image: np.ndarray) -> list[TextBox]:
    """The text boxes of an RGB image, most confident reading of each line, score ≥ MIN_SCORE."""
    with _LOCK:  # one inference at a time per process: onnxruntime already uses the cores
        result = _engine()(np.ascontiguousarray(image[:, :, ::-1]))  # rapidocr expects BGR like OpenCV
    if result is None or result.boxes is None or result.txts is None:
        return []
    boxes = []
    for points, text, score in zip(result.boxes, result.txts, result.scores):
        text = str(text).strip()
        if not text or float(score) < MIN_SCORE:
            continue
        xs, ys = [float(p[0]) for p in points], [float(p[1]) for p in points]
        boxes.append(TextBox(text, float(score), min(xs), min(ys), max(xs), max(ys)))
    return boxes
