"""Prepare a task scratch folder and (re)write its solver.py scaffold. The input is never written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from datasolver.data import Catalog, load_task
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.errors import ScaffoldError, ScratchError
from datasolver.solver.layout import ScratchLayout
from datasolver.solver.runner import clear_prediction
from datasolver.solver.scaffold import render_solver
from datasolver.solver.tools.solver_file import write_atomic


def prepare_task(task_dir: Path, scratch_root: Path, *, link_context: bool = True) -> Path:
    """Create `<scratch_root>/<task_id>/` (task.json, context/, workdir/solver.py, tmp/); return it.

    context/ mirrors the input's folders with each file a symlink to the input (or a copy when
    `link_context` is False). Preparing again rebuilds everything it made (the agent's edits and
    any prediction are discarded); derived/ belongs to the documents room and is left alone.
    """
    task = load_task(Path(task_dir))  # its task_id is one safe folder name (data.task_id_problem)
    source = Path(task_dir).resolve()
    layout = ScratchLayout.of(Path(scratch_root) / task.task_id)
    if layout.root == source or source in layout.root.parents:
        raise ScratchError(f"scratch folder {layout.root} is inside the input task {source}; choose another")
    layout.root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "task.json", layout.task_json)
    _mirror(source / "context", layout.context, link=link_context)
    for folder in (layout.workdir, layout.tmp, layout.cache):
        _remove(folder)
        folder.mkdir()
    write_scaffold(layout.root)
    return layout.root


def write_scaffold(task_scratch_dir: Path, table_names: list[str] | None = None) -> Path:
    """(Re)write workdir/solver.py and its pristine copy; table names default to the catalog's.

    Call again after derived/ tables appear, so the query-area comment lists them.
    """
    layout = ScratchLayout.of(task_scratch_dir).require()
    task = load_task(layout.root)
    if table_names is None:
        with Catalog.open(layout.root, cache_dir=layout.cache) as catalog:
            table_names = catalog.names()
    text = render_solver(task.task_id, task.question, table_names)
    try:
        write_atomic(layout.pristine, text)
        write_atomic(layout.solver_py, text)
    except (OSError, UnsafeFile) as exc:
        raise ScaffoldError(f"cannot write {layout.solver_py}: {exc}") from exc
    clear_prediction(layout)
    return layout.solver_py


def restore_scaffold(task_scratch_dir: Path) -> Path:
    """Put the pristine solver.py back and delete any prediction (for the agent's retry loop)."""
    layout = ScratchLayout.of(task_scratch_dir).require()
    if not safe_files.is_regular(layout.pristine):
        return write_scaffold(layout.root)
    try:
        write_atomic(layout.solver_py, safe_files.read_text(layout.pristine))
    except (OSError, UnsafeFile, UnicodeDecodeError) as exc:
        raise ScaffoldError(f"cannot restore {layout.solver_py}: {exc}") from exc
    clear_prediction(layout)
    return layout.solver_py


def _mirror(source: Path, target: Path, *, link: bool) -> None:
    """Rebuild `target` as real folders whose files link to (or copy) the files under `source`."""
    _remove(target)
    target.mkdir()
    if not source.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(source, followlinks=True):
        rel = Path(dirpath).relative_to(source)
        for name in dirnames:
            (target / rel / name).mkdir()
        for name in filenames:
            src = (Path(dirpath) / name).resolve()
            dst = target / rel / name
            if link:
                dst.symlink_to(src)
            else:
                shutil.copy2(src, dst)


def _remove(path: Path) -> None:
    # A symlink is removed itself, never followed: nothing in the input is touched.
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
