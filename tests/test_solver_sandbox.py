"""The sandbox on its own: confinement of writes, network, guards reported, fallback noted."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest

from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.sandbox.run import landlock_abi
from tests.helpers.processes import all_gone

# Every test runs cold and warm (forked from the fork server's zygote): tests/conftest.py.
pytestmark = pytest.mark.usefixtures("sandbox_path")

needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available on this kernel")


def sandboxed(tmp_path: Path, code: str, **limits):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                         limits=SandboxLimits(timeout_s=30, **limits))


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    # The grandchild holds a file open and beats into it every 20 ms; once the tree is killed no
    # process holds it (the host's /proc sees the sandbox's PID namespace too: tests/helpers/processes.py).
    # The run's clock reaches the timeout once the grandchild beats, however loaded the machine;
    # the child waits on a pipe it writes to itself, i.e. until it is killed.
    beat = tmp_path / "work" / "child.beat"
    child = (f"import time\nbeat = open({str(beat)!r}, 'a', buffering=1)\n"
             "while True:\n    beat.write('.'); time.sleep(0.02)\n")
    code = ("import os, subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', {child!r}])\n"
            "r, w = os.pipe()\nos.read(r, 1)\n")

    def clock() -> float:
        return time.monotonic() + (3600.0 if beat.exists() else 0.0)

    run = run_sandboxed([sys.executable, "-c", code], cwd=_work(tmp_path), write_dirs=[_work(tmp_path)],
                        log_dir=_work(tmp_path), limits=SandboxLimits(timeout_s=60), clock=clock)
    assert run.timed_out
    if not beat.exists():
        pytest.skip("the machine was too loaded to start the grandchild within 60 s")
    assert all_gone(beat), "the grandchild survived the timeout"


def _work(tmp_path: Path) -> Path:
    (tmp_path / "work").mkdir(exist_ok=True)
    return tmp_path / "work"


@needs_landlock
def test_guards_are_reported(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, "print('hi')", landlock="required")
    assert run.returncode == 0 and run.stdout == "hi\n"
    assert run.guards["writes_confined"] is True and run.guards["landlock_abi"] == landlock_abi()
    assert run.guards["rlimits"]["memory_bytes"] == SandboxLimits().memory_bytes
    assert run.notes == []


@needs_landlock
def test_write_confinement_and_dev_null(tmp_path: Path) -> None:
    code = (
        "import os\n"
        "open(os.devnull, 'w').write('ok')\n"
        "open('inside.txt', 'w').write('ok')\n"
        "os.makedirs('sub/dir'); os.rename('inside.txt', 'sub/dir/moved.txt')\n"
        f"open({str(tmp_path / 'outside.txt')!r}, 'w')\n"
    )
    run = sandboxed(tmp_path, code)
    assert run.returncode == 1 and "PermissionError" in run.stderr
    assert (tmp_path / "work" / "sub" / "dir" / "moved.txt").read_text() == "ok"
    assert not (tmp_path / "outside.txt").exists()


@needs_landlock
def test_landlock_off_is_reported_as_a_note(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, f"open({str(tmp_path / 'outside.txt')!r}, 'w').write('x')", landlock="off")
    assert run.returncode == 0 and (tmp_path / "outside.txt").exists()
    assert run.guards["writes_confined"] is False
    assert any("writes not confined" in note for note in run.notes)


def test_network_is_blocked(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        code = (
            "import socket\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')\n"
            "except OSError as exc:\n    print('blocked', type(exc).__name__)\n"
        )
        run = sandboxed(tmp_path, code)
    finally:
        server.close()
    if not (run.guards.get("network_namespace") or run.guards.get("tcp_blocked")):
        pytest.skip("neither a network namespace nor Landlock TCP rules are available here")
    assert run.stdout.startswith("blocked"), run.stdout


def test_cpu_limit(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, "while True: pass", cpu_seconds=1)
    assert run.signal_name in ("SIGXCPU", "SIGKILL") and not run.timed_out


def test_file_size_limit(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, "open('big', 'wb').write(b'x' * 3_000_000)", file_size_bytes=1_000_000)
    assert run.returncode == 1 and "File too large" in run.stderr
