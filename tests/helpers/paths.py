"""Where the repository and the project's shared data are (`../shared` sits beside the checkout
and is absent from a user's clone; tests that need it skip)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
DEV_TASKS = SHARED / "tasks" / "dev"
