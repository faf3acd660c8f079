"""Reading and atomically rewriting workdir/solver.py, the one file the edit tools touch."""

from __future__ import annotations

from pathlib import Path

from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.hashline import join_lines, split_lines
from datasolver.data.layout import ScratchLayout

MISSING_SOLVER = "workdir/solver.py does not exist; the task scratch folder must be prepared again."


def read_lines(layout: ScratchLayout) -> list[str] | None:
    """Lines of solver.py, or None when the file is missing (or not a regular file: never followed)."""
    try:
        return split_lines(safe_files.read_text(layout.solver_py, errors="replace"))
    except (FileNotFoundError, UnsafeFile):
        return None


def write_lines(layout: ScratchLayout, lines: list[str]) -> None:
    """Replace solver.py in one step, so a crash never leaves half a file."""
    write_atomic(layout.solver_py, join_lines(lines))


def write_atomic(path: Path, text: str) -> None:
    """Replace `path` through an unpredictable O_EXCL temporary file (see safe_files)."""
    safe_files.write_atomic(path, text)
