"""Run workdir/solver.py in the sandbox and classify the outcome: OK, NO OUTPUT or FAILED."""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import datasolver
from datasolver.clip import clip
from datasolver.data import LOADED_ENV
from datasolver.data.input_files import outside_links_env
from datasolver.sandbox import SandboxLimits, SandboxRun, run_sandboxed, safe_files
from datasolver.sandbox.fork_server import DATA_STACK
from datasolver.solver.prediction_check import PREDICTION_MAX_BYTES
from datasolver.data.errors import ScratchError
from datasolver.data.layout import PREDICTION_NAME, ScratchLayout
from datasolver.solver.scaffold import NO_RESULT_MARKER

# What a fork server for solver.py runs preloads: the data stack and the engine solver.py imports.
SOLVER_PRELOAD = (*DATA_STACK, "datasolver.data")
RunStatus = Literal["OK", "NO OUTPUT", "FAILED"]
_PARTIAL = f".{PREDICTION_NAME}.partial"


@dataclass
class SolverRun:
    """One run of solver.py: its status, the sandbox record and, when OK, the prediction."""

    status: RunStatus
    sandbox: SandboxRun
    prediction: Path | None
    error: str = ""  # FAILED: the shortened error report, error message first

    @property
    def why_no_prediction(self) -> str | None:
        """One line: why this run wrote no prediction (None when it did)."""
        if self.status == "OK":
            return None
        if self.status == "NO OUTPUT":
            return "`result` is still None"
        return self.error.splitlines()[0] if self.error.strip() else "failed"

    @property
    def notes(self) -> list[str]:
        """Sandbox caveats worth reporting (Landlock fallback, refused variables)."""
        return list(self.sandbox.notes)


def run_solver_script(layout: ScratchLayout, limits: SandboxLimits = SandboxLimits(),
                      loaded_catalog: Path | None = None) -> SolverRun:
    """Run solver.py from the task scratch folder; a stale prediction never survives a run.

    `loaded_catalog` (a catalog's `loaded_file()`, inside the scratch folder) lets solver.py query
    the tables the caller already loaded instead of reading every file again on each run.
    """
    if not safe_files.is_regular(layout.solver_py):
        raise ScratchError(f"{layout.solver_py} is missing; prepare the task again")
    clear_prediction(layout)
    layout.tmp.mkdir(exist_ok=True)
    # solver.py imports the very datasolver this process runs, installed or not.
    package_root = str(Path(datasolver.__file__).resolve().parent.parent)
    python_path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
    run = run_sandboxed(
        [sys.executable, str(layout.solver_py)],
        cwd=layout.root,
        write_dirs=[layout.workdir, layout.tmp],
        log_dir=layout.tmp,
        read_dirs=[layout.root],
        limits=limits,
        extra_env={"PYTHONPATH": python_path, **({LOADED_ENV: str(loaded_catalog)} if loaded_catalog else {}),
                   **outside_links_env()},
    )
    if run.timed_out or run.returncode != 0:
        clear_prediction(layout)
        return SolverRun("FAILED", run, None, failure_report(run, limits))
    problem = _prediction_problem(layout)
    if problem:
        clear_prediction(layout)
        return SolverRun("FAILED", run, None, problem)
    if safe_files.is_regular(layout.prediction):
        return SolverRun("OK", run, layout.prediction)
    return SolverRun("NO OUTPUT", run, None)


def clear_prediction(layout: ScratchLayout) -> None:
    safe_files.remove(layout.prediction)
    safe_files.remove(layout.query_log)
    safe_files.remove(layout.workdir / _PARTIAL)


def _prediction_problem(layout: ScratchLayout) -> str:
    """Why workdir/prediction.csv cannot be accepted ("" when absent or fine): never followed."""
    try:
        info = os.lstat(layout.prediction)
    except FileNotFoundError:
        return ""
    if not stat.S_ISREG(info.st_mode):
        return ("prediction.csv is not a regular file (a symlink, FIFO or folder); it was removed. "
                "Let the save block write it.")
    if info.st_size > PREDICTION_MAX_BYTES:
        return (f"prediction.csv is {info.st_size:,} bytes, over the {PREDICTION_MAX_BYTES:,}-byte limit for an "
                "answer; it was removed. Keep only the rows and columns the question asks for.")
    return ""


def user_output(run: SandboxRun, max_lines: int = 20) -> str:
    """What solver.py printed itself (the save block's own lines left out), last lines only."""
    lines = [
        line for line in run.stdout.splitlines()
        if line != NO_RESULT_MARKER and not re.match(r"saved \d+ rows x \d+ columns to ", line)
    ]
    return "\n".join(lines[-max_lines:])


_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')


def failure_report(run: SandboxRun, limits: SandboxLimits) -> str:
    """Why the run failed, error first, then where in solver.py, then a trimmed traceback."""
    if run.timed_out:
        head = (
            f"timed out after {limits.timeout_s:g} s: the process group was killed. "
            "Make the query cheaper (filter early, avoid cross joins) or raise `timeout`."
        )
        return _with_stderr_tail(head, run)
    frames, exception = _parse_traceback(run.stderr)
    if not exception:
        sig = run.signal_name
        if sig == "SIGXCPU":
            head = f"killed by SIGXCPU: CPU time limit ({limits.resolved_cpu_seconds()} s) reached."
        elif sig:
            head = f"killed by {sig} (memory limit {_gib(limits.memory_bytes)}, CPU limit, or a crash)."
        else:
            head = f"exited with status {run.returncode}."
        return _with_stderr_tail(head, run)
    # "datasolver.data.errors.QueryError: …" reads as "QueryError: …".
    exception[0] = re.sub(r"^(?:\w+\.)+(?=\w+:|\w+$)", "", exception[0])
    parts = [clip("\n".join(exception), 1500)]
    mine = [f for f in frames if Path(f[0]).name == "solver.py"]
    # Point at the model's own line, not the scaffold's run_sql helper.
    culprit = [f for f in mine if f[2] != "run_sql"] or mine
    if culprit:
        _, line, _, code = culprit[-1]
        parts.append(f"at solver.py line {line}: {code}")
    if frames:
        parts.append("traceback (shortened):")
        keep = mine + ([frames[-1]] if frames[-1] not in mine else [])
        for file, line, func, code in keep:
            parts.append(f"  {_short_path(file)}:{line} in {func}: {code}")
    notes = [line for line in run.stderr.splitlines() if line.startswith("[run_sql]")]
    return "\n".join(parts + notes[-5:])


def _parse_traceback(stderr: str) -> tuple[list[tuple[str, str, str, str]], list[str]]:
    """(frames of the last traceback as (file, line, function, code), the exception lines)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return [], []
    block = lines[starts[-1] + 1 :]
    frames: list[tuple[str, str, str, str]] = []
    i = 0
    while i < len(block):
        match = _FRAME.match(block[i])
        if not match:
            if block[i].startswith("    "):  # code line, ^^^^ markers
                i += 1
                continue
            break
        code = block[i + 1].strip() if i + 1 < len(block) and block[i + 1].startswith("    ") else ""
        frames.append((match["file"], match["line"], match["func"], clip(code, 200)))
        i += 1
    exception = [line for line in block[i:] if line.strip()]
    return frames, exception


def _with_stderr_tail(head: str, run: SandboxRun, max_chars: int = 800) -> str:
    tail = run.stderr.strip()
    return head + (f"\nstderr (last part):\n{clip(tail, max_chars, keep_end=True)}" if tail else "")


def _short_path(path: str) -> str:
    marker = f"{os.sep}datasolver{os.sep}"
    return "datasolver/" + path.split(marker, 1)[1] if marker in path else Path(path).name


def _gib(value: int | None) -> str:
    return "none" if value is None else f"{value / (1 << 30):g} GiB"
