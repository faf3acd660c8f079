"""The task's directory tree for the prompt: folders, file names and sizes, bounded in lines."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from datasolver.data import human_size

# Folders of the scratch dir the model should see; workdir/ and tmp/ are the agent's own.
SHOWN_FOLDERS = ("context", "derived")
FILES_PER_FOLDER = 25  # beyond this a folder's remaining files are summarized in one line


def render_tree(task_scratch_dir: Path, max_lines: int = 120, described: Collection[Path] = ()) -> str:
    """`context/` and `derived/` as an indented tree with file sizes (symlinks followed).

    Files in `described` (those backing a table, which the table descriptions name with their
    source file) are only counted, one line per folder, so the prompt does not list them twice.
    """
    root = Path(task_scratch_dir)
    lines: list[str] = []
    skip = {os.path.normpath(p) for p in described}
    for folder in SHOWN_FOLDERS:
        if (root / folder).is_dir():
            _walk(root / folder, f"{folder}/", 0, lines, skip)
    if not lines:
        return "(no context files)"
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines + 1
        lines = lines[: max_lines - 1] + [f"… {hidden} more lines not shown"]
    return "\n".join(lines)


def _walk(folder: Path, label: str, depth: int, lines: list[str], skip: set[str]) -> None:
    indent = "  " * depth
    lines.append(f"{indent}{label}")
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        lines.append(f"{indent}  (unreadable: {exc.strerror})")
        return
    visible = [e for e in entries if not e.name.startswith(".")]
    for entry in (e for e in visible if e.is_dir()):
        _walk(Path(entry.path), f"{entry.name}/", depth + 1, lines, skip)
    files = [e for e in visible if not e.is_dir()]
    tables = [e for e in files if os.path.normpath(e.path) in skip]
    if tables:
        total = sum(_bytes_of(e) for e in tables)
        lines.append(f"{indent}  {len(tables)} table file{'s' if len(tables) > 1 else ''} "
                     f"({human_size(total)}), named under Tables")
        files = [e for e in files if os.path.normpath(e.path) not in skip]
    for entry in files[:FILES_PER_FOLDER]:
        lines.append(f"{indent}  {entry.name}  ({_size_of(entry)})")
    if len(files) > FILES_PER_FOLDER:
        rest = files[FILES_PER_FOLDER:]
        total = sum(_bytes_of(e) for e in rest)
        lines.append(f"{indent}  … {len(rest)} more files ({human_size(total)})")


def _bytes_of(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat().st_size  # follows the context symlinks into the input
    except OSError:
        return 0


def _size_of(entry: os.DirEntry[str]) -> str:
    try:
        return human_size(entry.stat().st_size)
    except OSError:
        return "broken link"
