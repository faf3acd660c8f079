"""Hostile solver.py against the parent process: symlinks, FIFOs, forged facts, huge answers.

Each test is an attack a solver.py can mount with only what the sandbox lets it write (workdir/
and tmp/); the parent must not follow, block on, or believe any of it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

from datasolver.solver import SandboxLimits, SolverToolbox, prepare_task, restore_scaffold, run_sandboxed
from datasolver.solver import runner as runner_module
from datasolver.solver.checks import HEAD_ROWS, check_prediction
from datasolver.solver.solve import solve_task
from datasolver.solver.testing import call_json, make_tiny_task, set_query
from datasolver.solver.tools.solver_file import read_lines, write_lines

SECRET = "TOP-SECRET-GOLD-ANSWER"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside the scratch folder that stands for the input, a venv file or gold."""
    path = tmp_path / "victim.txt"
    path.write_text(SECRET + "\n", encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def sandboxed(work: Path, code: str, **limits):
    return run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                         limits=SandboxLimits(timeout_s=30, **limits))


def test_symlinks_planted_in_the_log_folder_are_never_written_through(tmp_path: Path, victim: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    plant = "".join(
        f"os.symlink({str(victim)!r}, {name!r})\n" for name in ("run.stdout", "run.stderr", "sandbox.json")
    )
    first = sandboxed(work, "import os\n" + plant)
    assert first.returncode == 0, first.stderr
    second = sandboxed(work, "print('hello'); import sys; print('err', file=sys.stderr)")
    assert second.returncode == 0 and second.stdout == "hello\n" and second.stderr == "err\n"
    assert victim.read_text(encoding="utf-8") == SECRET + "\n"


def test_a_fifo_in_place_of_a_log_cannot_hang_the_parent(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first = sandboxed(work, "import os\nfor n in ('run.stdout', 'run.stderr', 'sandbox.json'): os.mkfifo(n)")
    assert first.returncode == 0, first.stderr
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(sandboxed(work, "print('fine')")), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the parent blocked on a FIFO planted by the previous run"
    assert outcome[0].returncode == 0 and outcome[0].stdout == "fine\n"


def test_forged_sandbox_facts_are_not_reported(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    forged = json.dumps({"landlock_abi": 99, "writes_confined": True, "tcp_blocked": True, "scoped": True})
    code = f"open('sandbox.json', 'w').write({forged!r})"
    run = sandboxed(work, code, landlock="off")
    assert run.returncode == 0, run.stderr
    assert run.guards["writes_confined"] is False and run.guards["landlock_abi"] != 99
    assert any("writes not confined" in note for note in run.notes)


def test_huge_output_is_kept_as_a_bounded_tail(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run = sandboxed(work, "import sys\nfor i in range(200_000): print(i)\nprint('END')")
    assert run.returncode == 0 and run.stdout.endswith("199999\nEND\n")
    assert len(run.stdout.encode()) <= 64 * 1024 + 8 and run.stdout.startswith("…")


def test_symlinked_prediction_is_refused_not_read(root: Path, victim: Path, tmp_path: Path) -> None:
    with SolverToolbox(root) as box:
        set_query(box, f"os.symlink({str(victim)!r}, PREDICTION)\nresult = None")
        result = call_json(box, "run_solver", "{}")
        assert result.text.splitlines()[0] == "FAILED", result.text
        assert "not a regular file" in result.text and SECRET not in result.text
        assert not os.path.lexists(box.layout.prediction)
    run, published = solve_task(root, tmp_path / "out")
    assert run.status == "FAILED" and published is None
    assert not (tmp_path / "out").exists()


def test_atomic_writes_ignore_a_planted_predictable_temp_name(root: Path, victim: Path) -> None:
    layout = runner_module.ScratchLayout.of(root)
    # The name the old atomic write used: predictable from the parent's pid.
    os.symlink(victim, layout.workdir / f".solver.py.{os.getpid()}.tmp")
    os.symlink(victim, layout.workdir / f".solver.pristine.py.{os.getpid()}.tmp")
    lines = read_lines(layout)
    write_lines(layout, lines + ["# edited"])
    restore_scaffold(root)
    assert victim.read_text(encoding="utf-8") == SECRET + "\n"
    assert layout.solver_py.is_file() and not layout.solver_py.is_symlink()


def test_a_symlinked_solver_py_is_neither_read_nor_written_through(root: Path, victim: Path) -> None:
    layout = runner_module.ScratchLayout.of(root)
    layout.solver_py.unlink()
    layout.solver_py.symlink_to(victim)
    assert read_lines(layout) is None  # not the victim's lines
    with SolverToolbox(root) as box:
        shown = call_json(box, "read_solver", "{}")
    assert SECRET not in shown.text
    restore_scaffold(root)  # replaces the link itself
    assert not layout.solver_py.is_symlink()
    assert victim.read_text(encoding="utf-8") == SECRET + "\n"


def test_a_prediction_over_the_cap_is_a_clear_failure(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "PREDICTION_MAX_BYTES", 1000)
    with SolverToolbox(root) as box:
        set_query(box, "result = pd.DataFrame({'x': range(1000)})")
        result = call_json(box, "run_solver", "{}")
    assert result.text.splitlines()[0] == "FAILED"
    assert "over the 1,000-byte limit for an answer" in result.text
    assert not box.layout.prediction.exists()


def test_self_check_streams_with_a_cap(tmp_path: Path) -> None:
    path = tmp_path / "prediction.csv"
    path.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(20_000)), encoding="utf-8")
    check = check_prediction(path)
    assert check.shape == (20_000, 2) and len(check.head) == HEAD_ROWS and check.non_null == [20_000, 20_000]
    too_big = check_prediction(path, max_bytes=1000)
    assert too_big.shape == (0, 0) and any("over the 1000-byte limit" in w for w in too_big.warnings)


def test_self_check_refuses_symlinks_and_fifos(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "prediction.csv"
    link.symlink_to(victim)
    assert any("symlink" in w for w in check_prediction(link).warnings)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    assert any("not a regular file" in w for w in check_prediction(fifo).warnings)


def test_publishing_never_copies_through_a_link(root: Path, victim: Path) -> None:
    layout = runner_module.ScratchLayout.of(root)
    layout.prediction.symlink_to(victim)  # as a background process of the run could
    from datasolver.agent.publish import publish_prediction
    from datasolver.solver.errors import UnsafeFile

    with pytest.raises(UnsafeFile):
        publish_prediction(layout.prediction, root.parent / "out", "task_tiny")
