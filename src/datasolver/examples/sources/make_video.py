"""Regenerate input/task_demo_video/context/video/briefing.mp4 (needs fonts-noto-cjk and espeak-ng).

    python -m datasolver.examples.sources.make_video
"""

from __future__ import annotations

from pathlib import Path

from datasolver.data.layout import TaskFolder
from datasolver.video.synth import Slide, make_screencast

HEAD = ("字段 Field", "运算 Op", "阈值 Threshold")
SLIDES = [
    Slide("销售看板 Sales", (("区域 Region", "订单 Orders"), ("全部 All", "30")), seconds=2.5,
          narration="This is the sales dashboard."),
    Slide("筛选面板 Filter", (HEAD, ("amount", ">=", "5000")), seconds=3.0,
          narration="First we filter amount at least 5000."),
    Slide("筛选面板 Filter", (HEAD, ("amount", ">=", "6000")), seconds=3.5, cursor=True, tooltip="应用 Apply",
          narration="Then the threshold is raised to 6000."),
]


def main() -> None:
    task = TaskFolder(Path(__file__).resolve().parents[1] / "input" / "task_demo_video")
    target = task.context / "video" / "briefing.mp4"
    make_screencast(target, SLIDES, size=(640, 360), fps=10)
    print(f"{target} ({target.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
