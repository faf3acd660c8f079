"""Where things live in a task scratch folder: one place, so no module guesses a path.

<scratch>/<task_id>/
    task.json               copy of the input's task.json
    context/                real folders, files as symlinks into the input (or copies)
    derived/                document tables written by the documents room (may be absent)
    workdir/solver.py       the program the model edits
    workdir/prediction.csv  what solver.py writes
    workdir/.solver.pristine.py   the scaffold as generated, for restore_scaffold()
    tmp/                    DuckDB cache and TMPDIR/HOME of sandboxed runs (sandbox-writable)
    cache/                  the parent process's DuckDB cache (never writable by the sandbox)
    tmp/run_sql.jsonl       the queries run_sql executed in the latest run (for the answer checks)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datasolver.solver.errors import ScratchError

PREDICTION_NAME = "prediction.csv"
"""The answer file: what solver.py writes into workdir/ and what the grader reads."""
QUERY_LOG_NAME = "run_sql.jsonl"


@dataclass(frozen=True)
class ScratchLayout:
    """Paths of one task scratch folder (`root` = `<scratch>/<task_id>`)."""

    root: Path

    @classmethod
    def of(cls, task_scratch_dir: Path | str) -> "ScratchLayout":
        return cls(Path(task_scratch_dir).resolve())

    @property
    def task_json(self) -> Path:
        return self.root / "task.json"

    @property
    def context(self) -> Path:
        return self.root / "context"

    @property
    def derived(self) -> Path:
        return self.root / "derived"

    @property
    def workdir(self) -> Path:
        return self.root / "workdir"

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
        return self.root / "tmp"

    @property
    def cache(self) -> Path:
        """The parent's own cache: kept out of the sandbox-writable tree, so it never follows a planted link."""
        return self.root / "cache"

    @property
    def query_log(self) -> Path:
        return self.tmp / QUERY_LOG_NAME

    def require(self) -> "ScratchLayout":
        """Raise ScratchError unless this looks like a prepared task scratch folder."""
        if not self.task_json.is_file() or not self.workdir.is_dir():
            raise ScratchError(
                f"{self.root} is not a prepared task scratch folder (no task.json or workdir/); "
                "run `datasolver prepare TASK_DIR SCRATCH_DIR` first"
            )
        return self
