"""Shared fixtures. No test may reach a real model endpoint or the network."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
DEV_TASKS = SHARED / "tasks" / "dev"


@pytest.fixture(autouse=True)
def _no_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block real endpoints: tests configure the scripted server explicitly."""
    for var in ("MODEL_API_URL", "MODEL_API_KEY", "MODEL_NAME", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def dev_tasks() -> Path:
    """../shared/tasks/dev, or skip: a user's clone has no ../shared."""
    if not (DEV_TASKS / "oracle.jsonl").is_file():
        pytest.skip(f"{DEV_TASKS} is absent (only present beside the project's own checkout)")
    return DEV_TASKS
