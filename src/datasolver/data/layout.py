"""Where things live in a task folder and in its scratch copy: the one module that spells their names.

An input task folder (read-only to the program):

<task>/
    task.json               the task: question, task_id, difficulty (`data.tasks.load_task` reads it,
                            once per task; the `Task` object travels from there)
    context/                the data files, documents and knowledge.md

A prepared scratch folder, `<scratch>/<task_id>/`, is a task folder as well (the catalog opens
either the same way) plus what the program writes:

    task.json               copy of the input's task.json
    context/                real folders, files as symlinks into the input (or copies)
    prepared.json           written by prepare: the input folder and the files it refused
    derived/                document tables written by the documents room (may be absent)
    derived/video/          the video room's keyframes and timeline.json (may be absent)
    workdir/solver.py       the program the model edits
    workdir/prediction.csv  what solver.py writes
    workdir/.solver.pristine.py   the scaffold as generated, for restore_scaffold()
    tmp/                    DuckDB cache and TMPDIR/HOME of sandboxed runs (sandbox-writable)
    tmp/run_sql.jsonl       the queries run_sql executed in the latest run (for the answer checks)
    cache/                  the parent process's DuckDB cache (never writable by the sandbox)
    votes/solve_<n>/        the independent solves of `run --votes N`
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver.data.errors import ScratchError

DERIVED = "derived"
"""The derived/ folder's name, also the label of its tables (`derived/<file>`) and their kind."""
PREDICTION_NAME = "prediction.csv"
"""The answer file: what solver.py writes into workdir/ and what the grader reads."""
_TASK_JSON, _CONTEXT, _WORKDIR, _TMP = "task.json", "context", "workdir", "tmp"
OUTPUT_FOLDERS = frozenset({DERIVED, _WORKDIR})
"""Names of the folders the program writes beside context/: never read as input documents."""


# Two classes, one extending the other: a scratch folder is a task folder plus what the program writes.
@dataclass(frozen=True)
class TaskFolder:
    """Paths of an input task folder (`root` = `<input>/<task>`), or of any data folder."""

    root: Path

    @property
    def task_json(self) -> Path:
        return self.root / _TASK_JSON

    @property
    def context(self) -> Path:
        return self.root / _CONTEXT

    def data_dir(self) -> Path:
        """Where the data files are: context/ of a task folder, else the folder itself."""
        return self.context if self.context.is_dir() else self.root

    def is_task(self) -> bool:
        return self.task_json.is_file()

    @classmethod
    def of_context(cls, folder: Path) -> "TaskFolder":
        """The task folder a context folder belongs to (its parent when that holds task.json), else itself."""
        folder = Path(folder)
        parent = cls(folder.parent)
        return parent if folder.name == _CONTEXT and parent.is_task() else cls(folder)


@dataclass(frozen=True)
class ScratchLayout(TaskFolder):
    """Paths of one task scratch folder (`root` = `<scratch>/<task_id>`)."""

    @classmethod
    def of(cls, task_scratch_dir: Path | str) -> "ScratchLayout":
        """The layout of a scratch folder's path (resolved): the one conversion, where a folder comes
        in (prepare, a command given a scratch folder); `require()` checks it is prepared. From there
        the layout travels as it is: no function on the run path takes a path in its place."""
        return cls(Path(task_scratch_dir).resolve())

    @property
    def prepared_record(self) -> Path:
        return self.root / "prepared.json"

    @property
    def derived(self) -> Path:
        return self.root / DERIVED

    @property
    def video(self) -> Path:
        return self.derived / "video"

    @property
    def workdir(self) -> Path:
        return self.root / _WORKDIR

    @property
    def solver_py(self) -> Path:
        return self.workdir / "solver.py"

    @property
    def pristine(self) -> Path:
        return self.workdir / ".solver.pristine.py"

    @property
    def prediction(self) -> Path:
        return self.workdir / PREDICTION_NAME

    @property
    def tmp(self) -> Path:
        return self.root / _TMP

    @property
    def cache(self) -> Path:
        """The parent's own cache: kept out of the sandbox-writable tree, so it never follows a planted link."""
        return self.root / "cache"

    def own_cache(self) -> Path:
        """cache/, made when absent: ScratchError when it is a link or not a folder. A handed-over
        scratch may ship `cache -> elsewhere`; the parent's catalog database is never made (and
        removed) in a link's target."""
        try:
            self.cache.mkdir(exist_ok=True)
        except FileExistsError:
            pass
        if self.cache.is_symlink() or not self.cache.is_dir():
            raise ScratchError(f"{self.cache} is a symlink or not a folder; refusing to keep the catalog there "
                               "(remove it, or prepare the task again)")
        return self.cache

    @property
    def query_log(self) -> Path:
        return self.tmp / "run_sql.jsonl"

    @property
    def votes(self) -> Path:
        return self.root / "votes"

    def is_prepared(self) -> bool:
        """Whether this looks like a prepared scratch folder (task.json, context/ and workdir/)."""
        return self.is_task() and self.workdir.is_dir() and self.context.is_dir()

    def require(self) -> "ScratchLayout":
        """Raise ScratchError unless this looks like a prepared task scratch folder."""
        if not self.is_prepared():
            raise ScratchError(
                f"{self.root} is not a prepared task scratch folder (no task.json, context/ or workdir/); "
                "run `datasolver prepare TASK_DIR SCRATCH_DIR` first"
            )
        return self
