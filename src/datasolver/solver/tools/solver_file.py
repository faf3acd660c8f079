"""Reading and atomically rewriting workdir/solver.py, the one file the edit tools touch."""

from __future__ import annotations

import os
from pathlib import Path

from datasolver.solver.hashline import join_lines, split_lines
from datasolver.solver.layout import ScratchLayout

MISSING_SOLVER = "workdir/solver.py does not exist; the task scratch folder must be prepared again."


def read_lines(layout: ScratchLayout) -> list[str] | None:
    """Lines of solver.py, or None when the file is missing."""
    try:
        return split_lines(layout.solver_py.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None


def write_lines(layout: ScratchLayout, lines: list[str]) -> None:
    """Replace solver.py in one step, so a crash never leaves half a file."""
    write_atomic(layout.solver_py, join_lines(lines))


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
