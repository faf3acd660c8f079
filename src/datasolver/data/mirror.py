"""A checked copy of a task's context/: the files the input check accepts, nothing else.

`prepare` makes a scratch folder this way, and `datasolver video DIR` reads a raw task folder's
media through one: a program that resolves names relative to a file it reads (an FFmpeg demuxer, a
document's links) then finds beside it only the accepted files, never a folder link or FIFO the
check refused.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from datasolver.data.errors import ScratchError
from datasolver.data.files import list_context_files
from datasolver.data.input_files import write_prepared_record
from datasolver.data.input_limits import InputBudget, InputLimits
from datasolver.data.layout import ScratchLayout, TaskFolder


def mirror_context(source: TaskFolder, target: ScratchLayout, *, link: bool = True) -> list[tuple[str, str]]:
    """Rebuild `target`'s context/ as real folders whose files link to (or copy) the files under
    `source`'s context/ that the input check accepts, and record `source` and the refused files in
    `target`'s prepared.json; return the refused (relative path, reason).

    A copy takes regular files only, within the input caps (`InputLimits.from_env()`). The target
    may not be the source or lie inside it, nor the other way round (its context/ is rebuilt)."""
    source_root, target_root = Path(os.path.realpath(source.root)), Path(os.path.realpath(target.root))
    if source_root == target_root or source_root in target_root.parents or target_root in source_root.parents:
        raise ScratchError(f"scratch folder {target.root} and the input task {source.root} overlap; choose another")
    refused = _mirror(source.context, target.context, link=link)
    write_prepared_record(target.root, refused, source_root)
    return refused


def _mirror(source: Path, target: Path, *, link: bool) -> list[tuple[str, str]]:
    remove_entry(target)
    target.mkdir()
    if not source.is_dir():
        return []
    files = list_context_files(source)
    refused = list(files.refused)
    budget = InputBudget(InputLimits.from_env())
    for src in files.every_file():
        rel = files.relative(src)
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if link:
            dst.symlink_to(src.resolve())
            continue
        size = src.stat().st_size
        if reason := budget.refusal(size):
            refused.append((rel, reason.replace("not loaded", "not copied")))
            continue
        shutil.copyfile(src.resolve(), dst)
        budget.spend(size)
    return refused


def remove_entry(path: Path) -> None:
    """Remove a file, link or folder of a folder the program made; a link is removed itself, never followed."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
