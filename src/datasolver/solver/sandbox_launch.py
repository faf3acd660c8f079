"""Sandbox launcher: restrict this process, then exec the real command.

Run by path as `python -S -E sandbox_launch.py CONFIG_JSON -- CMD...` (see sandbox.py).
Restrictions applied here survive exec and bind every descendant:
  - no_new_privs, then Landlock: file-system writes only beneath `write_dirs` (plus
    `write_files` such as /dev/null); TCP bind/connect denied (ABI >= 4); signals and abstract
    unix sockets scoped to the sandbox (ABI >= 6). Reads are not restricted.
  - rlimits: address space, CPU seconds, file size, core size 0, optionally process count.
Stdlib only and importable as a module too (the parent asks `landlock_abi()` from here).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    # Run by path: sys.path[0] is this folder; never let a sibling shadow a stdlib module.
    sys.path.pop(0)

import ctypes
import json
import os
import platform
import resource

# Syscall numbers are unified across architectures since 5.x (alpha is the exception).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = (
    (554, 555, 556) if platform.machine() == "alpha" else (444, 445, 446)
)
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_* bits that change the file system (reads and execute stay unhandled).
_FS_WRITE_FILE = 1 << 1
_FS_WRITE_ABI1 = (
    _FS_WRITE_FILE
    | (1 << 4)  # REMOVE_DIR
    | (1 << 5)  # REMOVE_FILE
    | (1 << 6)  # MAKE_CHAR
    | (1 << 7)  # MAKE_DIR
    | (1 << 8)  # MAKE_REG
    | (1 << 9)  # MAKE_SOCK
    | (1 << 10)  # MAKE_FIFO
    | (1 << 11)  # MAKE_BLOCK
    | (1 << 12)  # MAKE_SYM
)
_FS_REFER = 1 << 13  # ABI 2: rename/link across directories
_FS_TRUNCATE = 1 << 14  # ABI 3
_NET_TCP = (1 << 0) | (1 << 1)  # ABI 4: BIND_TCP | CONNECT_TCP
_SCOPE_ALL = (1 << 0) | (1 << 1)  # ABI 6: ABSTRACT_UNIX_SOCKET | SIGNAL

EXIT_SETUP_FAILED = 125  # the launcher could not apply a required restriction


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel struct is __attribute__((packed))
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    if sys.platform != "linux":
        return 0
    try:
        libc = _libc()
        abi = libc.syscall(
            ctypes.c_long(_SYS_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(int(abi), 0)


def restrict_self(write_dirs: list[str], write_files: list[str]) -> dict:
    """Apply Landlock to this process; return what is enforced. Raises OSError on failure."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available on this kernel")
    libc = _libc()
    fs = _FS_WRITE_ABI1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(fs, _NET_TCP if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # older kernels reject fields they do not know
    ruleset = _check(
        libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    try:
        file_access = _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0)
        for path, access in [(d, fs) for d in write_dirs] + [(f, file_access) for f in write_files]:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(access, fd)
                _check(
                    libc.syscall(
                        ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                        ctypes.byref(rule), ctypes.c_uint32(0),
                    ),
                    f"landlock_add_rule({path})",
                )
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(
            libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)
    return {"landlock_abi": abi, "writes_confined": True, "tcp_blocked": abi >= 4, "scoped": abi >= 6}


def apply_rlimits(limits: dict) -> dict:
    """Lower the rlimits named in `limits` (never above the current hard limit)."""
    names = {
        "memory_bytes": resource.RLIMIT_AS,
        "cpu_seconds": resource.RLIMIT_CPU,
        "file_size_bytes": resource.RLIMIT_FSIZE,
        "max_processes": resource.RLIMIT_NPROC,
    }
    applied = {}
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for key, which in names.items():
        value = limits.get(key)
        if value is None:
            continue
        _, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        new_hard = cap
        if which == resource.RLIMIT_CPU:  # SIGXCPU at the soft limit, SIGKILL 5 s later
            new_hard = cap + 5 if hard == resource.RLIM_INFINITY else min(cap + 5, hard)
        resource.setrlimit(which, (cap, new_hard))
        applied[key] = cap
    return applied


def report_status(config: dict, status: dict) -> None:
    """Send what is enforced to the parent through its pipe, then close it before exec.

    The pipe is the only channel: solver.py never holds it, so it cannot forge these facts.
    """
    fd = config.get("status_fd")
    if fd is None:
        return
    try:
        os.write(fd, json.dumps(status).encode("utf-8"))
    finally:
        os.close(fd)


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    command = argv[argv.index("--") + 1 :]
    status: dict = {"landlock_abi": 0, "writes_confined": False, "tcp_blocked": False, "scoped": False}
    mode = config.get("landlock", "best_effort")
    if mode != "off":
        try:
            status.update(restrict_self(config["write_dirs"], config.get("write_files", [])))
        except OSError as exc:
            status["landlock_error"] = str(exc)
            if mode == "required":
                print(f"datasolver sandbox: Landlock required but not applied: {exc}", file=sys.stderr)
                return EXIT_SETUP_FAILED
    try:
        status["rlimits"] = apply_rlimits(config.get("limits", {}))
    except (OSError, ValueError) as exc:
        print(f"datasolver sandbox: could not set rlimits: {exc}", file=sys.stderr)
        return EXIT_SETUP_FAILED
    report_status(config, status)
    os.execvp(command[0], command)  # the environment was scrubbed by the parent
    return EXIT_SETUP_FAILED  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv))
