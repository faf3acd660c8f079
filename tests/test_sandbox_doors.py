"""The doors issue 23 found in the sandbox, each tried again and closed: SysV IPC and kernel
keyrings of other processes, parent-side reads through planted links and FIFOs, folder links in the
read allow-list, runs past the task deadline, unbounded inodes, and the parent's DuckDB reader.
Each runs cold and warm (forked from the fork server's zygote) where the sandbox is involved."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import pytest

from datasolver.sandbox import SandboxLimits, kernel_features, landlock_abi, run_sandboxed

needs_namespaces = pytest.mark.skipif(not kernel_features().get("namespaces"),
                                      reason="user namespaces are not available here")
needs_seccomp = pytest.mark.skipif(not kernel_features().get("seccomp"), reason="no seccomp filter for this machine")
needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available on this kernel")

_IPC_CREAT, _IPC_RMID = 0o1000, 0


def sandboxed(tmp_path: Path, code: str, **limits):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                         limits=SandboxLimits(timeout_s=60, **limits))


@pytest.fixture
def shared_segment():
    """A SysV shared memory segment made outside the sandbox, holding a secret: (key, id)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    key = 0x5D5A0000 + os.getpid() % 0xFFFF
    shmid = libc.shmget(key, 4096, _IPC_CREAT | 0o666)
    if shmid < 0:
        pytest.skip(f"shmget failed here: {os.strerror(ctypes.get_errno())}")
    address = libc.shmat(shmid, None, 0)
    ctypes.memmove(address, b"SHM-SECRET", 10)
    yield key, shmid, address
    libc.shmdt(ctypes.c_void_p(address))
    libc.shmctl(shmid, _IPC_RMID, None)


@needs_namespaces
@pytest.mark.usefixtures("sandbox_path")
def test_a_shared_memory_segment_made_outside_is_invisible_inside(tmp_path: Path, shared_segment) -> None:
    key, shmid, address = shared_segment
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\nlibc.shmat.restype = ctypes.c_void_p\n"
            f"print('get', libc.shmget({key}, 0, 0), os.strerror(ctypes.get_errno()))\n"
            f"at = libc.shmat({shmid}, None, 0)\n"
            "if at not in (None, ctypes.c_void_p(-1).value):\n"
            "    print('read', ctypes.string_at(at, 10)); ctypes.memmove(at, b'OVERWRITE!', 10)\n"
            "else:\n    print('attach refused', os.strerror(ctypes.get_errno()))\n")
    run = sandboxed(tmp_path, code)
    assert run.returncode == 0, run.stderr
    assert "get -1" in run.stdout and "attach refused" in run.stdout, run.stdout
    assert b"SHM-SECRET" == ctypes.string_at(address, 10)  # not overwritten
    assert run.guards["ipc_namespace"] is True and run.guards["uts_namespace"] is True


@needs_namespaces
@pytest.mark.usefixtures("sandbox_path")
def test_the_host_name_is_the_sandboxs_own(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, "import socket\nprint(socket.gethostname())")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "sandbox"


@needs_seccomp
@pytest.mark.usefixtures("sandbox_path")
def test_the_kernel_keyring_calls_are_refused(tmp_path: Path) -> None:
    # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0), add_key("user", …, @s), request_key.
    nr = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            f"add_key, request_key, keyctl = {nr}\n"
            "for name, args in (('keyctl', (keyctl, 0, -3, 0)),\n"
            "                   ('add_key', (add_key, b'user', b'datasolver-test', b'x', 1, -3)),\n"
            "                   ('request_key', (request_key, b'user', b'datasolver-test', None, 0))):\n"
            "    result = libc.syscall(*args)\n"
            "    print(name, result, os.strerror(ctypes.get_errno()) if result < 0 else '')\n")
    run = sandboxed(tmp_path, code)
    assert run.returncode == 0, run.stderr
    for name in ("keyctl", "add_key", "request_key"):
        assert f"{name} -1 Operation not permitted" in run.stdout, run.stdout
    assert run.guards["keyrings_blocked"] is True


@needs_landlock
@pytest.mark.usefixtures("sandbox_path")
def test_a_folder_link_in_the_scratch_folder_opens_nothing_beyond_it(tmp_path: Path) -> None:
    from datasolver.solver import prepare_task, rerun_solver
    from datasolver.solver.testing import make_tiny_task

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("FOLDER-LINK-SECRET", encoding="utf-8")
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    (root / "context" / "csv" / "zz").symlink_to(outside)
    (root / "context" / "csv" / "root").symlink_to("/")
    solver_py = root / "workdir" / "solver.py"
    code = solver_py.read_text(encoding="utf-8").replace("result = None", (
        "got = []\n"
        "for path in ('context/csv/zz/secret.txt', 'context/csv/root/etc/shadow', 'context/csv/root/etc/hostname'):\n"
        "    try:\n        got.append(open(TASK_DIR / path).read()[:40])\n"
        "    except OSError as exc:\n        got.append(type(exc).__name__)\n"
        "print('GOT', got)\n"
        "result = pd.DataFrame({'got': got})"), 1)
    solver_py.write_text(code, encoding="utf-8")
    run, _ = rerun_solver(root, tmp_path / "out")
    assert run.status == "OK", run.error or run.sandbox.stderr
    assert "GOT ['PermissionError', 'PermissionError', 'PermissionError']" in run.sandbox.stdout, run.sandbox.stdout
    assert any("zz left out of the read allow-list" in n and "a folder" in n for n in run.notes), run.notes
    assert any("root left out of the read allow-list" in n for n in run.notes), run.notes
