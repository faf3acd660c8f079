"""Prepare a task scratch folder and (re)write its solver.py scaffold. The input is never written."""

from __future__ import annotations

import shutil
from pathlib import Path

from datasolver.data import Catalog, ScratchError, ScratchLayout, Task, TaskError, TaskFolder, load_task
from datasolver.data.mirror import mirror_context, remove_entry
from datasolver.sandbox import UnsafeFile, safe_files
from datasolver.solver.errors import ScaffoldError
from datasolver.solver.runner import clear_prediction
from datasolver.solver.scaffold import render_solver
from datasolver.solver.tools.solver_file import write_atomic


def prepare_task(task: Task | Path, scratch_root: Path, *, link_context: bool = True) -> Path:
    """Create `<scratch_root>/<task_id>/` (task.json, context/, workdir/solver.py, tmp/); return it
    (`prepare_scratch` returns its layout, for callers that hand it on)."""
    return prepare_scratch(task, scratch_root, link_context=link_context).root


def prepare_scratch(task: Task | Path, scratch_root: Path, *, link_context: bool = True) -> ScratchLayout:
    """Create `<scratch_root>/<task_id>/` (task.json, context/, workdir/solver.py, tmp/); return its layout.

    `task` is a discovered Task (its task.json is not read again) or a task folder (read here).

    context/ mirrors the input's folders with each file a symlink to the input (or a copy when
    `link_context` is False): only the files the data room's one check accepts (regular files
    inside the task folder, unless outside links were allowed); the others are recorded in
    `prepared.json`, which the scratch's catalog shows as notes. Preparing again rebuilds
    everything it made (the agent's edits and any prediction are discarded); derived/ belongs to
    the documents room and is left alone.
    """
    if not isinstance(task, Task):
        task = load_task(Path(task))  # its task_id is one safe folder name (data.tasks.task_id_problem)
    source = TaskFolder(task.dir.resolve())
    if not source.is_task():  # a discovered task's folder can go before it is prepared
        raise TaskError(f"{task.dir}: no task.json (the folder changed after the task was read)")
    layout = ScratchLayout.of(Path(scratch_root) / task.task_id)
    if layout.root == source.root or source.root in layout.root.parents:
        raise ScratchError(f"scratch folder {layout.root} is inside the input task {source.root}; choose another")
    layout.root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source.task_json, layout.task_json)  # a copy for people; the program uses `task`
    mirror_context(source, layout, link=link_context)
    for folder in (layout.workdir, layout.tmp, layout.cache):
        remove_entry(folder)
        folder.mkdir()
    write_scaffold(layout, task=task)
    return layout


def write_scaffold(layout: ScratchLayout, table_names: list[str] | None = None, *, task: Task | None = None) -> Path:
    """(Re)write workdir/solver.py and its pristine copy; table names default to the catalog's.

    Call again after derived/ tables appear, so the query-area comment lists them. `task` is the
    task's Task when the caller has it; without it the scratch's task.json is read.
    """
    task = task if task is not None else load_task(layout.root)
    if table_names is None:
        with Catalog.open(layout.root, cache_dir=layout.own_cache()) as catalog:
            table_names = catalog.names()
    text = render_solver(task.task_id, task.question, table_names)
    try:
        write_atomic(layout.pristine, text)
        write_atomic(layout.solver_py, text)
    except (OSError, UnsafeFile) as exc:
        raise ScaffoldError(f"cannot write {layout.solver_py}: {exc}") from exc
    clear_prediction(layout)
    return layout.solver_py


def restore_scaffold(layout: ScratchLayout) -> Path:
    """Put the pristine solver.py back and delete any prediction (for the agent's retry loop)."""
    if not safe_files.is_regular(layout.pristine):
        return write_scaffold(layout)
    try:
        write_atomic(layout.solver_py, safe_files.read_text(layout.pristine))
    except (OSError, UnsafeFile, UnicodeDecodeError) as exc:
        raise ScaffoldError(f"cannot restore {layout.solver_py}: {exc}") from exc
    clear_prediction(layout)
    return layout.solver_py
