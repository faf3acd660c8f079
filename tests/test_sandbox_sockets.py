"""Sockets in the sandbox by allow-list (issue 33, item 3): socket() only for the families a run
needs. AF_VSOCK is not namespaced (a run shared the VM's vsock port space with the host), nor are
AF_PACKET and AF_ALG worth having; a 32-bit `int 0x80` system call bypassed every rule of the
64-bit filter. Each runs cold and warm (forked from the fork server's zygote)."""

from __future__ import annotations

import errno
import platform
import sys
from pathlib import Path

import pytest

from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.sandbox.run import kernel_features
from datasolver.data import ScratchLayout
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import call_json, make_tiny_task, set_query

needs_seccomp = pytest.mark.skipif(not kernel_features().get("seccomp"), reason="no seccomp filter for this machine")
pytestmark = [needs_seccomp, pytest.mark.usefixtures("sandbox_path")]

# (name, family, type, protocol): what model code could ask for, none of which a run needs.
REFUSED = [
    ("vsock", 40, 1, 0),
    ("packet", 17, 3, 0),
    ("alg", 38, 5, 0),
    ("netlink_uevent", 16, 2, 15),
    ("netlink_audit", 16, 3, 9),
    ("unix", 1, 1, 0),
    ("bluetooth", 31, 1, 0),
]
ALLOWED = [("inet", 2, 1, 0), ("inet6", 10, 1, 0), ("netlink_route", 16, 3, 0)]

_PROBE = """
import socket
for name, family, kind, proto in {cases!r}:
    try:
        socket.socket(family, kind, proto).close()
        print(name, 'open')
    except OSError as exc:
        print(name, 'errno', exc.errno)
"""

# mov eax, 359 (i386 socket); mov ebx, 40 (AF_VSOCK); mov ecx, 1; xor edx, edx; int 0x80; ret
# (rbx saved around it): the 32-bit ABI, which a filter that allows "another arch" never sees.
_INT80 = """
import ctypes, mmap
code = bytes.fromhex('53b867010000bb28000000b90100000031d2cd805bc3')
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print('int80', call())
"""


def sandboxed(tmp_path: Path, code: str):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                         limits=SandboxLimits(timeout_s=60))


def test_only_the_allowed_socket_families_open(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, _PROBE.format(cases=REFUSED + ALLOWED))
    assert run.returncode == 0, run.stderr
    said = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    for name, *_ in REFUSED:
        assert said[name] == f"errno {errno.EACCES}", (name, run.stdout)
    for name, *_ in ALLOWED:
        assert said[name] == "open", (name, run.stdout)
    assert run.guards["socket_families"] == ["AF_INET", "AF_INET6", "AF_NETLINK (NETLINK_ROUTE only)"]
    assert run.guards["foreign_abi_blocked"] is True


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the int 0x80 entry is x86_64's 32-bit ABI")
def test_a_32_bit_system_call_is_refused(tmp_path: Path) -> None:
    run = sandboxed(tmp_path, _INT80)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"int80 {-errno.ENOSYS}", run.stdout  # not a socket, not EAFNOSUPPORT


def test_solver_py_still_runs_under_the_allow_list(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, "import socket\n"
                       "vsock = 'open'\n"
                       "try:\n    socket.socket(40, socket.SOCK_STREAM)\n"
                       "except PermissionError:\n    vsock = 'refused'\n"
                       "result = run_sql('SELECT count(*) AS n FROM orders').assign(vsock=vsock)")
        result = call_json(box, "run_solver", "{}")
    assert result.text.splitlines()[0] == "OK", result.text
    assert (root / "workdir" / "prediction.csv").read_text().splitlines()[1].endswith(",refused")
