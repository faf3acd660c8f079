"""Hostile solver.py against the parent process: symlinks, FIFOs, forged facts, huge answers.

Each test is an attack a solver.py can mount with only what the sandbox lets it write (workdir/
and tmp/); the parent must not follow, block on, or believe any of it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.sandbox.run import kernel_features, landlock_abi
from datasolver.data import ScratchLayout
from datasolver.solver import SolverToolbox, restore_scaffold
from datasolver.solver.prepare import prepare_task
from datasolver.solver import runner as runner_module
from datasolver.solver.prediction_check import HEAD_ROWS, check_prediction
from datasolver.solver.solve import rerun_solver
from tests.helpers.solver import call_json, make_tiny_task, set_query
from datasolver.solver.tools.solver_file import read_lines, write_lines
from tests.helpers.processes import alive, all_gone, holders

# Every test runs cold and warm (forked from the fork server's zygote): tests/conftest.py.
pytestmark = pytest.mark.usefixtures("sandbox_path")

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
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, f"os.symlink({str(victim)!r}, PREDICTION)\nresult = None")
        result = call_json(box, "run_solver", "{}")
        assert result.text.splitlines()[0] == "FAILED", result.text
        assert "not a regular file" in result.text and SECRET not in result.text
        assert not os.path.lexists(box.layout.prediction)
    run, published = rerun_solver(ScratchLayout.of(root), tmp_path / "out")
    assert run.status == "FAILED" and published is None
    assert not (tmp_path / "out").exists()


def test_atomic_writes_ignore_a_planted_predictable_temp_name(root: Path, victim: Path) -> None:
    layout = runner_module.ScratchLayout.of(root)
    # The name the old atomic write used: predictable from the parent's pid.
    os.symlink(victim, layout.workdir / f".solver.py.{os.getpid()}.tmp")
    os.symlink(victim, layout.workdir / f".solver.pristine.py.{os.getpid()}.tmp")
    lines = read_lines(layout)
    write_lines(layout, lines + ["# edited"])
    restore_scaffold(ScratchLayout.of(root))
    assert victim.read_text(encoding="utf-8") == SECRET + "\n"
    assert layout.solver_py.is_file() and not layout.solver_py.is_symlink()


def test_a_symlinked_solver_py_is_neither_read_nor_written_through(root: Path, victim: Path) -> None:
    layout = runner_module.ScratchLayout.of(root)
    layout.solver_py.unlink()
    layout.solver_py.symlink_to(victim)
    assert read_lines(layout) is None  # not the victim's lines
    with SolverToolbox(ScratchLayout.of(root)) as box:
        shown = call_json(box, "read_solver", "{}")
    assert SECRET not in shown.text
    restore_scaffold(ScratchLayout.of(root))  # replaces the link itself
    assert not layout.solver_py.is_symlink()
    assert victim.read_text(encoding="utf-8") == SECRET + "\n"


def test_a_prediction_over_the_cap_is_a_clear_failure(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "PREDICTION_MAX_BYTES", 1000)
    with SolverToolbox(ScratchLayout.of(root)) as box:
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
    from datasolver.solver.publish import publish_prediction
    from datasolver.sandbox import UnsafeFile

    with pytest.raises(UnsafeFile):
        publish_prediction(layout.prediction, root.parent / "out", "task_tiny")


# ---- the whole process tree is contained -------------------------------------------------------

needs_pidns = pytest.mark.skipif(not kernel_features().get("namespaces"),
                                 reason="user + PID namespaces cannot be created on this machine")
needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available on this kernel")
needs_seccomp = pytest.mark.skipif(not kernel_features().get("seccomp"), reason="no seccomp filter for this platform")


def _heartbeat(path: Path) -> str:
    """Code that holds `path` open and appends a line to it every 20 ms forever."""
    return (f"import time\nbeat = open({str(path)!r}, 'a', buffering=1)\n"
            "while True:\n    beat.write('.\\n'); time.sleep(0.02)\n")


def _daemon_code(beat: Path) -> str:
    return (
        "import subprocess, sys, time, os\n"
        f"subprocess.Popen([sys.executable, '-c', {_heartbeat(beat)!r}], start_new_session=True)\n"
        f"while not os.path.exists({str(beat)!r}): time.sleep(0.02)\n"
    )


@needs_pidns
def test_a_setsid_daemon_dies_with_the_run(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    run = sandboxed(work, _daemon_code(work / "daemon.beat"))  # returns once the daemon has beaten
    assert run.returncode == 0, run.stderr
    assert (work / "daemon.beat").exists()
    assert all_gone(work / "daemon.beat"), "a setsid daemon outlived the run"


@needs_pidns
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_run_dies_with_its_parent(tmp_path: Path, sig: signal.Signals, sandbox_path: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    code = _daemon_code(work / "daemon.beat") + _heartbeat(work / "solver.beat")
    # The parent takes Ctrl-C as Python does by default even when the suite runs with SIGINT ignored
    # (a shell starts a background job that way, and children inherit it).
    run = (f"run_sandboxed([sys.executable, '-c', {code!r}], cwd=w, write_dirs=[w], log_dir=w, "
           "limits=SandboxLimits(timeout_s=120))\n")
    if sandbox_path == "warm":  # the parent's own fork server: it (and the run) must die with the parent
        run = ("from datasolver.sandbox.fork_server import ForkServer, use_fork_server\n"
               "with ForkServer() as fs, use_fork_server(fs):\n"
               f"    assert fs.usable(), fs.failure\n    print(fs.pid, flush=True)\n    {run}")
    parent = (
        "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "import sys\nfrom pathlib import Path\nfrom datasolver.sandbox import SandboxLimits, run_sandboxed\n"
        f"w = Path({str(work)!r})\n" + run
    )
    proc = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (work / "solver.beat").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (work / "solver.beat").exists(), "the sandboxed run did not start"
        assert holders(work / "solver.beat") and holders(work / "daemon.beat")  # both are running
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert all_gone(work / "solver.beat"), f"solver.py survived its parent's {sig.name}"
        assert all_gone(work / "daemon.beat"), f"a daemon of solver.py survived its parent's {sig.name}"
        if sandbox_path == "warm":
            zygote_pid = int(proc.stdout.readline())
            deadline = time.monotonic() + 10
            while alive(zygote_pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(zygote_pid), "the fork server outlived its parent"
    finally:
        proc.kill()
        proc.wait()


@needs_pidns
def test_a_fork_bomb_is_bounded(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # Each child holds its process slot until the parent is gone (EOF on a pipe only the parent
    # writes to): no sleep, and no child outlives the parent even without the sandbox's kill.
    code = (
        "import os\nn = 0\nr, w = os.pipe()\n"
        "try:\n"
        "    for _ in range(600):\n"
        "        if os.fork() == 0:\n            os.close(w); os.read(r, 1); os._exit(0)\n"
        "        n += 1\n"
        "except OSError as exc:\n    print('refused', exc.errno)\n"
        "print(n)\n"
    )
    run = sandboxed(work, code, max_processes=40)
    assert run.returncode == 0, run.stderr
    cap = run.guards.get("process_cap") or {}
    if not cap:
        pytest.skip("no tree-wide process cap here (per-namespace pid_max needs kernel >= 6.14; "
                    "RLIMIT_NPROC does not bind root)")
    forked = int(run.stdout.split()[-1])
    assert forked < min(cap.values()) and "refused" in run.stdout, (run.stdout, cap)


@needs_pidns
def test_memory_is_bounded_for_the_tree_not_per_process(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # The children hold their memory until the parent is gone; the parent waits on a pipe it
    # writes to itself, i.e. until it is killed (for memory, or else at the sandbox's timeout).
    code = (
        "import os\nr, w = os.pipe()\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        "        os.close(w)\n"
        "        block = bytearray(150 << 20)\n"  # zero-filled: resident once touched
        "        for i in range(0, len(block), 4096): block[i] = 1\n"
        "        os.read(r, 1); os._exit(0)\n"
        "os.read(r, 1)\n"
    )
    run = sandboxed(work, code, tree_memory_bytes=300 << 20)
    assert run.killed_for and "memory" in run.killed_for, (run.killed_for, run.guards)
    assert not run.timed_out  # the memory watch ended it, not the sandbox's timeout


def _memory_group_available() -> bool:
    from datasolver.sandbox import cgroup as sandbox_cgroup

    group, _ = sandbox_cgroup.create(64 << 20, 16)
    if group is None:
        return False
    group.remove()
    return True


@pytest.mark.skipif(not _memory_group_available(),
                    reason="no writable cgroup memory controller here (needs root, or a delegated cgroup v2 subtree)")
def test_the_kernel_bounds_the_trees_memory_even_between_samples(tmp_path: Path, monkeypatch) -> None:
    # Four children allocate 150 MB each at once and exit: a burst the parent's sampling (every
    # 0.5 s; switched off here) can miss. The run's cgroup holds the tree to 300 MiB regardless.
    from functools import partial

    from datasolver.sandbox import run as sandbox_module
    from datasolver.sandbox.watch import TreeWatch

    monkeypatch.setattr(sandbox_module, "TreeWatch", partial(TreeWatch, every_s=3600.0))
    work = tmp_path / "work"
    work.mkdir()
    code = (
        "import os\n"
        "kids = []\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = bytearray(150 << 20)\n"
        "        for i in range(0, len(block), 4096): block[i] = 1\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "print(sorted(os.waitpid(k, 0)[1] for k in kids))\n"
    )
    run = sandboxed(work, code, tree_memory_bytes=300 << 20)
    assert run.guards.get("tree_cgroup"), run.guards
    assert run.killed_for and "memory limit" in run.killed_for, (run.killed_for, run.stdout, run.guards)
    assert run.guards["peak_tree_memory_bytes"] <= (300 << 20) + (8 << 20)
    assert not list(Path("/sys/fs/cgroup").glob(f"*/datasolver-run-{os.getpid()}-*"))  # removed after the run


def test_total_disk_written_is_bounded(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    code = (
        "import time\n"
        "for i in range(200):\n"
        "    open(f'f{i}', 'wb').write(b'x' * (1 << 20)); time.sleep(0.02)\n"
    )
    run = sandboxed(work, code, disk_bytes=5 << 20)
    assert run.killed_for and "disk" in run.killed_for, run.killed_for
    assert len(list(work.glob("f*"))) < 200


# ---- reads are confined, unix sockets refused --------------------------------------------------


@needs_landlock
def test_reads_outside_the_allow_list_are_refused(tmp_path: Path, victim: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    targets = [str(victim), str(Path.home() / ".bashrc"), "/etc/shadow", f"/proc/{os.getpid()}/cmdline"]
    code = (
        "import sys\n"
        f"for path in {targets!r}:\n"
        "    try:\n        open(path, 'rb').read(); print('READ', path)\n"
        "    except FileNotFoundError:\n        print('absent', path)\n"
        "    except PermissionError:\n        print('denied', path)\n"
        "import pandas\nprint('pandas ok')\n"
    )
    run = sandboxed(work, code)
    assert run.returncode == 0, run.stderr
    assert "READ" not in run.stdout and f"denied {victim}" in run.stdout, run.stdout
    assert "pandas ok" in run.stdout and run.guards["reads_confined"] is True


@needs_landlock
def test_solver_reads_its_context_but_not_gold_beside_the_input(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    gold = task / "gold.csv"
    gold.write_text("answer\n" + SECRET + "\n", encoding="utf-8")
    root = prepare_task(task, tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, (
            "src = Path(os.path.realpath(TASK_DIR / 'context' / 'csv' / 'orders.csv'))\n"
            "result = pd.DataFrame({'gold': [open(src.parent.parent.parent / 'gold.csv').read()]})"
        ))
        result = call_json(box, "run_solver", "{}")
    assert result.text.splitlines()[0] == "FAILED" and "PermissionError" in result.text, result.text
    assert SECRET not in result.text


@needs_seccomp
def test_unix_sockets_cannot_reach_outside(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    path = tmp_path / "outside.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    try:
        code = (
            "import socket\n"
            "try:\n"
            f"    s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r}); print('connected')\n"
            "except OSError as exc:\n    print('blocked', exc.errno)\n"
        )
        run = sandboxed(work, code)
    finally:
        server.close()
    assert run.stdout.startswith("blocked"), run.stdout
    assert run.guards["unix_sockets_blocked"] is True
