"""Generated screencasts for the video tests (Pillow slides, PyAV encoding, espeak-ng narration).

The media are made once per test session; tests skip with the reason when the CJK font, espeak-ng
or the video extra is missing (CI installs them: see .ci/run).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

PANEL_HEAD = ("字段 Field", "运算 Op", "阈值 Threshold")

# Four states: a cut to a dashboard, a cut to a filter panel, the same panel with ONE changed digit
# under a moving cursor with a passing tooltip, then a crossfade to the result.
SLIDES_SPEC = [
    dict(title="销售看板 Sales", rows=(("区域 Region", "销售额 Sales"), ("华东 East", "12345"), ("华北 North", "8765")),
         seconds=2.5, narration="Sales in the east were 12345."),
    dict(title="筛选面板 Filter", rows=(PANEL_HEAD, ("amount", ">=", "5000")), seconds=2.5),
    dict(title="筛选面板 Filter", rows=(PANEL_HEAD, ("amount", ">=", "6000")), seconds=2.5, cursor=True,
         tooltip="点击应用 Apply filter"),
    dict(title="结果 Result", rows=(("订单数 Orders", "42"),), seconds=2.5, transition="fade",
         narration="The final threshold is 6000."),
]


@dataclass(frozen=True)
class Screencast:
    path: Path
    starts: list[float]
    seconds: list[float]


def require_media_tools(speech: bool = False) -> None:
    pytest.importorskip("av", reason="the video extra is not installed (pip install -e '.[video]')")
    from datasolver.video.synth import CJK_FONTS

    if not any(Path(f).is_file() for f in CJK_FONTS):
        pytest.skip("no CJK font: Debian fonts-noto-cjk is not installed (.ci/run installs it)")
    if speech and shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (.ci/run installs it)")


def make(path: Path, spec: list[dict] = SLIDES_SPEC, **kwargs: object) -> Screencast:
    from datasolver.video.synth import Slide, make_screencast

    slides = [Slide(**s) for s in spec]
    starts = make_screencast(path, slides, **kwargs)  # type: ignore[arg-type]
    return Screencast(path, starts, [s.seconds for s in slides])


def state_of(cast: Screencast, t: float) -> int:
    """Index of the slide on screen at time t."""
    return max(i for i, start in enumerate(cast.starts) if start <= t + 1e-9)
