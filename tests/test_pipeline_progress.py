"""Progress: plain log lines off a terminal, a rich bar on one, the choice between them."""

from __future__ import annotations

import io
import re

from rich.console import Console

import pytest

from datasolver.pipeline import make_progress
from datasolver.pipeline.progress import LogProgress, RichProgress
from datasolver.pipeline.summary import TaskRecord

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _record(task_id, status, tokens, reason=None):
    return TaskRecord(task_id, status, attempts=1, requests=3, seconds=2.5, reason=reason,
                      usage={"requests": 3, "prompt_tokens": tokens - 10, "completion_tokens": 10,
                             "total_tokens": tokens, "retries": 0})


def test_log_lines_carry_counts_tokens_and_eta():
    stream = io.StringIO()
    progress = LogProgress(stream)
    progress.start(3, skipped=1)
    progress.task_started("task_a", "full")
    progress.task_started("task_b", "fast")
    progress.task_finished(_record("task_a", "solved", 100))
    progress.task_finished(_record("task_b", "failed", 50, "deadline reached in attempt 1"))
    progress.close()
    lines = [re.sub(r"^\d\d:\d\d:\d\d ", "", line) for line in stream.getvalue().splitlines()]
    assert lines[0] == "run: 3 task(s) to solve (1 already have a prediction, skipped)"
    assert lines[1:3] == ["start task_a", "start task_b [fast]"]
    assert lines[3].startswith(
        "[1/3] task_a solved in 2.5s (attempts 1, requests 3, tokens 100) | solved 1, fallback 0, failed 0, "
        "tokens 100, ETA ")
    assert lines[4].startswith(
        "[2/3] task_b failed in 2.5s (attempts 1, requests 3, tokens 50): deadline reached in attempt 1 "
        "| solved 1, fallback 0, failed 1, tokens 150, ETA ")
    assert lines[5] == "done: solved 1, fallback 0, failed 1, tokens 150"


def test_the_rich_bar_shows_counts_and_tokens():
    out = io.StringIO()
    progress = RichProgress(Console(file=out, force_terminal=True, width=150))
    progress.start(2, skipped=0)
    progress.task_finished(_record("task_a", "solved", 1234))
    progress.task_finished(_record("task_b", "fallback", 66, "deadline"))
    progress.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    assert "2/2" in text and "✓ 1" in text and "~ 1" in text and "✗ 0" in text
    assert "1300 tok" in text
    assert "task_b: fallback (deadline)" in text


def test_make_progress_picks_by_terminal():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(make_progress(io.StringIO()), LogProgress)
    assert isinstance(make_progress(Tty()), RichProgress)


def test_the_start_line_comes_with_the_prepare_stage_and_the_mode_after_it():
    stream = io.StringIO()
    progress = LogProgress(stream)
    progress.task_preparing("task_a")
    progress.task_preparing("task_b")
    progress.task_started("task_a", "full")
    progress.task_started("task_b", "fallback_only")
    lines = [re.sub(r"^\d\d:\d\d:\d\d ", "", line) for line in stream.getvalue().splitlines()]
    assert lines == ["start task_a", "start task_b", "task_b: fallback_only mode"]
