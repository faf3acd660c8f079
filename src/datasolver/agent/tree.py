"""The task's directory tree for the prompt: folders, file names and sizes, bounded in lines."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from datasolver.data import ScratchLayout, human_size
from datasolver.data.results import escape_breaks

FILES_PER_FOLDER = 25  # beyond this a folder's remaining files are summarized in one line


@dataclass
class _Listing:
    """The tree's lines as the walk adds them, and the table files it only counts."""

    skip: set[str]  # files backing a table: counted, not listed
    hide: set[str]  # files the prompt gives elsewhere: left out
    lines: list[str] = field(default_factory=list)
    table_files: int = 0
    table_bytes: int = 0


def render_tree(layout: ScratchLayout, max_lines: int = 120, described: Collection[Path] = (),
                shown: Collection[Path] = ()) -> str:
    """`context/` and `derived/` as an indented tree with file sizes (symlinks followed).

    Files in `described` (those backing a table, which the table descriptions name with their
    source file) are only counted, in one last line for the whole tree, so the prompt does not
    list them twice; files in `shown` (whose content the prompt gives elsewhere: knowledge.md, the
    document-table manifest) are left out. A folder that holds nothing else is not shown.
    """
    listing = _Listing(skip={os.path.normpath(p) for p in described}, hide={os.path.normpath(p) for p in shown})
    lines = listing.lines
    # The folders the model should see; workdir/ and tmp/ are the agent's own.
    for folder in (layout.context, layout.derived):
        if folder.is_dir():
            _walk(folder, f"{folder.name}/", 0, listing)
    if listing.table_files:
        lines.append(f"{listing.table_files} table file{'s' if listing.table_files > 1 else ''} "
                     f"({human_size(listing.table_bytes)}), named under Tables")
    if not lines:
        return "(no context files)"
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines + 1
        lines = lines[: max_lines - 1] + [f"… {hidden} more lines not shown"]
    return "\n".join(lines)


def _walk(folder: Path, label: str, depth: int, listing: _Listing) -> None:
    """Append the folder's lines (its label only when something in it is listed); count table files."""
    indent = "  " * depth
    lines, skip, hide = listing.lines, listing.skip, listing.hide
    start = len(lines)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        lines += [f"{indent}{label}", f"{indent}  (unreadable: {exc.strerror})"]
        return
    visible = [e for e in entries if not e.name.startswith(".")]
    for entry in (e for e in visible if e.is_dir()):
        _walk(Path(entry.path), f"{escape_breaks(entry.name)}/", depth + 1, listing)
    files = [e for e in visible if not e.is_dir()]
    backing = [e for e in files if os.path.normpath(e.path) in skip]
    listing.table_files += len(backing)
    listing.table_bytes += sum(_bytes_of(e) for e in backing)
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
