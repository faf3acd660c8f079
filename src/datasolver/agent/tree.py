"""The task's directory tree for the prompt: folders, file names and sizes, bounded in lines."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from datasolver.data import ScratchLayout, human_size
from datasolver.data.results import escape_breaks

FILES_PER_FOLDER = 25  # beyond this a folder's remaining files are summarized in one line


def render_tree(task_scratch_dir: ScratchLayout | Path, max_lines: int = 120, described: Collection[Path] = (),
                shown: Collection[Path] = ()) -> str:
    """`context/` and `derived/` as an indented tree with file sizes (symlinks followed).

    Files in `described` (those backing a table, which the table descriptions name with their
    source file) are only counted, in one last line for the whole tree, so the prompt does not
    list them twice; files in `shown` (whose content the prompt gives elsewhere: knowledge.md, the
    document-table manifest) are left out. A folder that holds nothing else is not shown.
    """
    layout = ScratchLayout.of(task_scratch_dir, resolve=False)
    lines: list[str] = []
    skip = {os.path.normpath(p) for p in described}
    hide = {os.path.normpath(p) for p in shown}
    tables = [0, 0]  # table files seen, their bytes
    # The folders the model should see; workdir/ and tmp/ are the agent's own.
    for folder in (layout.context, layout.derived):
        if folder.is_dir():
            _walk(folder, f"{folder.name}/", 0, lines, skip, tables, hide)
    if tables[0]:
        lines.append(f"{tables[0]} table file{'s' if tables[0] > 1 else ''} ({human_size(tables[1])}), "
                     "named under Tables")
    if not lines:
        return "(no context files)"
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines + 1
        lines = lines[: max_lines - 1] + [f"… {hidden} more lines not shown"]
    return "\n".join(lines)


def _walk(folder: Path, label: str, depth: int, lines: list[str], skip: set[str], tables: list[int],
          hide: set[str]) -> None:
    """Append the folder's lines (its label only when something in it is listed); count table files."""
    indent = "  " * depth
    start = len(lines)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        lines += [f"{indent}{label}", f"{indent}  (unreadable: {exc.strerror})"]
        return
    visible = [e for e in entries if not e.name.startswith(".")]
    for entry in (e for e in visible if e.is_dir()):
        _walk(Path(entry.path), f"{escape_breaks(entry.name)}/", depth + 1, lines, skip, tables, hide)
    files = [e for e in visible if not e.is_dir()]
    backing = [e for e in files if os.path.normpath(e.path) in skip]
    tables[0] += len(backing)
    tables[1] += sum(_bytes_of(e) for e in backing)
    files = [e for e in files if os.path.normpath(e.path) not in skip | hide]
    self_lines = []
    for entry in files[:FILES_PER_FOLDER]:
        self_lines.append(f"{indent}  {escape_breaks(entry.name)}  ({_size_of(entry)})")
    if len(files) > FILES_PER_FOLDER:
        rest = files[FILES_PER_FOLDER:]
        total = sum(_bytes_of(e) for e in rest)
        self_lines.append(f"{indent}  … {len(rest)} more files ({human_size(total)})")
    lines += self_lines
    if len(lines) > start:  # something in this folder is listed: show the folder above it
        lines.insert(start, f"{indent}{label}")


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
