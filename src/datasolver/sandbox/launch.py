"""Sandbox launcher: contain and restrict a process tree, then exec the real command.

Run by path as `python -S -E launch.py CONFIG_JSON -- CMD...` (see run.py), or
`--probe` to ask which kernel features work here. Two steps, usable on their own (a fork server
calls them in a fresh child):

  spawn_contained(config, command)  this process dies with its parent (PR_SET_PDEATHSIG), enters
      new user + PID + network + IPC + UTS namespaces when it can, forks the namespace's first process and
      waits for it, relaying its exit status. When this process dies, that first process dies,
      and with it every process of the namespace (a setsid daemon included).
  confine(config) / confine_and_exec(config, command)  in the process that becomes the command: PID count cap
      (pid_max of the namespace, RLIMIT_NPROC), Landlock (writes only beneath `write_dirs`, reads
      only beneath `read_dirs`/`read_files`, TCP denied, signals and abstract sockets scoped),
      seccomp (socket() only for AF_INET/AF_INET6/routing netlink, no io_uring, no kernel keyrings,
      no system call of another ABI), rlimits; reports what is enforced through the
      parent's pipe, closes it, and execs.

Restrictions survive exec and bind every descendant. Stdlib only; importable as a module too.
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
import signal
import stat

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
_FS_EXECUTE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 2, 1 << 3
_FS_READ = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR
_FS_FILE_READ = _FS_EXECUTE | _FS_READ_FILE
_FS_REFER = 1 << 13  # ABI 2: rename/link across directories
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_FILE_ACCESS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | (1 << 14) | (1 << 15)  # + TRUNCATE, IOCTL_DEV
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


def restrict_self(
    write_dirs: list[str], write_files: list[str], read_dirs: list[str] | None = None, read_files: list[str] | None = None
) -> dict:
    """Apply Landlock to this process; return what is enforced. Raises OSError on failure.

    With `read_dirs` None reads are not handled (anything readable stays readable); otherwise
    reading and executing are allowed only beneath `read_dirs` and `write_dirs` and for the
    single files in `read_files`/`write_files`.
    """
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is not available on this kernel")
    libc = _libc()
    write = _FS_WRITE_ABI1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    confine_reads = read_dirs is not None
    fs = write | (_FS_READ if confine_reads else 0)
    attr = _RulesetAttr(fs, _NET_TCP if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # older kernels reject fields they do not know
    ruleset = _check(
        libc.syscall(ctypes.c_long(_SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    read = _FS_READ if confine_reads else 0
    file_write = _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0)
    rules = [(d, write | read) for d in write_dirs] + [(f, file_write | (read & _FS_FILE_READ)) for f in write_files]
    if confine_reads:
        rules += [(d, _FS_READ) for d in read_dirs or []] + [(f, _FS_FILE_READ) for f in read_files or []]
    skipped = []
    try:
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                skipped.append(path)
                continue
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    access &= _FS_FILE_ACCESS  # a rule on a file takes file rights only
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
        set_no_new_privs()
        _check(
            libc.syscall(ctypes.c_long(_SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
            "landlock_restrict_self",
        )
    finally:
        os.close(ruleset)
    return {"landlock_abi": abi, "writes_confined": True, "reads_confined": confine_reads, "tcp_blocked": abi >= 4,
            "scoped": abi >= 6}


def set_no_new_privs() -> None:
    _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


# ---- seccomp: socket() only for the families a run needs, no io_uring (which could create sockets
# too), no kernel keyrings (add_key, request_key, keyctl: another process's keys, or a channel between
# runs), and no system call of another ABI (32-bit `int 0x80` calls bypass every rule of this one) ----
_SECCOMP_ARCH = {  # machine: (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup, (__NR_add_key, request_key, keyctl))
    "x86_64": (0xC000003E, 41, 425, (248, 249, 250)),
    "aarch64": (0xC00000B7, 198, 425, (217, 218, 219)),
}
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_RET_ALLOW, _SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
_AF_INET, _AF_INET6, _AF_NETLINK, _NETLINK_ROUTE = 2, 10, 16, 0
SOCKET_FAMILIES = ("AF_INET", "AF_INET6", "AF_NETLINK (NETLINK_ROUTE only)")
"""What socket() may create: the families the network namespace confines (a down loopback; TCP is
also refused by Landlock), and the routing netlink that glibc's getaddrinfo asks. Every other family
(AF_UNIX, AF_VSOCK, AF_PACKET, AF_ALG, other netlink protocols, …) fails with EACCES."""


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def _assemble(program: list[tuple]) -> list[tuple[int, int, int, int]]:
    """Classic BPF from (code, k) and (code, k, jump-if-true label, jump-if-false label) entries and
    ("label", name) marks; a jump label of None falls through to the next instruction."""
    where, count = {}, 0
    for ins in program:
        if ins[0] == "label":
            where[ins[1]] = count
        else:
            count += 1
    out: list[tuple[int, int, int, int]] = []
    for ins in program:
        if ins[0] == "label":
            continue
        here = len(out)
        code, k, *jumps = ins
        jt, jf = [0 if label is None else where[label] - here - 1 for label in (jumps or [None, None])]
        out.append((code, jt, jf, k))
    return out


def block_unix_sockets() -> dict:
    """Install the seccomp filter: socket() only for SOCKET_FAMILIES (others EACCES), io_uring_setup
    ENOSYS, add_key, request_key and keyctl EPERM, any call of another ABI (x32, 32-bit) ENOSYS."""
    machine = platform.machine()
    if sys.platform != "linux" or machine not in _SECCOMP_ARCH:
        raise OSError(f"no seccomp filter for {sys.platform}/{machine}")
    arch, nr_socket, nr_uring, nr_keys = _SECCOMP_ARCH[machine]
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    deny_eperm, deny_eacces, deny_enosys = _SECCOMP_RET_ERRNO | 1, _SECCOMP_RET_ERRNO | 13, _SECCOMP_RET_ERRNO | 38
    keys: list[tuple] = []
    for nr in nr_keys:
        keys += [(jeq_k, nr, None, f"after_{nr}"), (ret_k, deny_eperm), ("label", f"after_{nr}")]
    program = _assemble([
        (ld_w_abs, 4),  # A = seccomp_data.arch
        (jeq_k, arch, "native", None),
        (ret_k, deny_enosys),  # another ABI: refused outright
        ("label", "native"),
        (ld_w_abs, 0),  # A = seccomp_data.nr
        (jge_k, 0x40000000, None, "not_x32"),  # x32 system calls: refused outright
        (ret_k, deny_enosys),
        ("label", "not_x32"),
        (jeq_k, nr_uring, None, "not_uring"),
        (ret_k, deny_enosys),
        ("label", "not_uring"),
        *keys,
        (jeq_k, nr_socket, None, "allow"),
        (ld_w_abs, 16),  # A = low 32 bits of args[0], the address family
        (jeq_k, _AF_INET, "allow", None),
        (jeq_k, _AF_INET6, "allow", None),
        (jeq_k, _AF_NETLINK, None, "deny"),
        (ld_w_abs, 32),  # A = low 32 bits of args[2], the netlink protocol
        (jeq_k, _NETLINK_ROUTE, "allow", "deny"),
        ("label", "deny"),
        (ret_k, deny_eacces),
        ("label", "allow"),
        (ret_k, _SECCOMP_RET_ALLOW),
    ])
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), filters)
    set_no_new_privs()
    _check(_libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "prctl(PR_SET_SECCOMP)")
    return {"unix_sockets_blocked": True, "keyrings_blocked": True, "socket_families": list(SOCKET_FAMILIES),
            "foreign_abi_blocked": True}


# ---- namespaces and the process tree ----
_CLONE_NEWUTS, _CLONE_NEWIPC = 0x04000000, 0x08000000
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
HOSTNAME = b"sandbox"  # the UTS namespace's name: the machine's own is not shown
_PR_SET_PDEATHSIG = 1
_PID_MAX_MIN = 301  # the kernel's floor for pid_max


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies (reset by credential changes: call again after)."""
    _check(_libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def enter_namespaces(network: bool = True, ipc: bool = True) -> None:
    """Move this process into new user, IPC (no SysV IPC object or POSIX message queue of another
    process is visible) and UTS (its own host name) namespaces, and a network one; its next child
    starts a PID namespace."""
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWUSER | _CLONE_NEWPID | (_CLONE_NEWNET if network else 0)
    flags |= (_CLONE_NEWIPC | _CLONE_NEWUTS) if ipc else 0
    libc = _libc()
    _check(libc.unshare(ctypes.c_int(flags)), "unshare")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"0 {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"0 {gid} 1")
    if ipc:
        _check(libc.sethostname(HOSTNAME, ctypes.c_size_t(len(HOSTNAME))), "sethostname")


def cap_processes(max_processes: int, in_namespace: bool, outer_uid: int = 1) -> dict:
    """Bound how many processes (threads included) the tree can hold.

    In a fresh PID namespace its pid_max (kernel >= 6.14) caps every task in it, whoever runs
    it; RLIMIT_NPROC, counted per user namespace, caps a non-root user's tree as well.
    """
    out: dict = {}
    if in_namespace:
        try:
            with open("/proc/sys/kernel/pid_max", "w") as fh:
                fh.write(str(max(max_processes + 1, _PID_MAX_MIN)))
            with open("/proc/sys/kernel/pid_max") as fh:
                value = int(fh.read())
            if value <= max(max_processes + 1, _PID_MAX_MIN):
                out["pid_max"] = value
        except (OSError, ValueError):
            pass
        resource.setrlimit(resource.RLIMIT_NPROC, (max_processes, max_processes))
        if outer_uid != 0:  # the kernel exempts processes that are root outside the namespace
            out["nproc_rlimit"] = max_processes
    return out


def join_cgroup(config: dict, status: dict) -> None:
    """Move this process into the run's cgroup (made by the parent) before it forks anything, so
    that every descendant is born inside the group's memory and process limits."""
    paths = config.get("cgroup_procs") or []
    try:
        for path in paths:
            with open(path, "w") as fh:
                fh.write(str(os.getpid()))
        status["cgroup_joined"] = bool(paths)
    except OSError as exc:
        status["cgroup_joined"] = False
        status["cgroup_error"] = f"could not join the run's cgroup: {exc}"


def spawn_contained(config: dict, command: list[str], become=None) -> int:
    """Contain the tree (see the module docstring) and run `command` in it; returns an exit code.

    `become(config, command, status) -> exit code` is what the process that turns into the command
    does; by default `confine_and_exec`. The fork server passes one that confines the same way and
    then runs Python code in place instead of exec (zygote.py).
    """
    become = become or confine_and_exec
    status: dict = {"pid_namespace": False, "network_namespace": False, "outer_uid": os.getuid()}
    join_cgroup(config, status)
    die_with_parent()
    if os.getppid() != config.get("parent_pid", os.getppid()):
        return EXIT_SETUP_FAILED  # the parent is already gone
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if config.get("namespaces", True):
        try:
            ipc = config.get("ipc", True)
            enter_namespaces(network=config.get("network", True), ipc=ipc)
            die_with_parent()  # the namespace switch reset it
            status.update(pid_namespace=True, network_namespace=config.get("network", True), ipc_namespace=ipc,
                          uts_namespace=ipc)
        except OSError as exc:
            status["namespace_error"] = str(exc)
    if not status["pid_namespace"]:
        return become(config, command, status)
    report_r, report_w = os.pipe()
    first = os.fork()
    if first == 0:  # the namespace's first process: it reaps, relays, and takes the namespace down
        try:
            os.close(report_r)
            die_with_parent()
            os._exit(_namespace_init(config, command, status, report_w, become))
        except BaseException:  # never return into the launcher's own stack
            os._exit(EXIT_SETUP_FAILED)
    os.close(report_w)
    if config.get("status_fd") is not None:
        os.close(config["status_fd"])
    _, first_status = os.waitpid(first, 0)
    with os.fdopen(report_r, "rb") as fh:
        reported = fh.read()
    wait_status = int(reported) if reported.strip().isdigit() else first_status
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # the parent sees the same signal (SIGXCPU, SIGKILL…)
        return 128 + sig
    return os.waitstatus_to_exitcode(wait_status)


def _namespace_init(config: dict, command: list[str], status: dict, report_fd: int, become) -> int:
    """PID 1 of the namespace: run the command as PID 2 (PID 1 ignores default-action signals
    such as SIGXCPU), reap every orphan, and report the command's raw wait status."""
    command_pid = os.fork()
    if command_pid == 0:
        try:
            os.close(report_fd)
            die_with_parent()
            os._exit(become(config, command, status))
        except BaseException:
            os._exit(EXIT_SETUP_FAILED)
    if config.get("status_fd") is not None:
        os.close(config["status_fd"])
    while True:
        pid, wait_status = os.wait()
        if pid == command_pid:
            os.write(report_fd, str(wait_status).encode())
            return 0  # exiting ends every process left in the namespace


class SetupFailed(OSError):
    """A restriction the configuration requires could not be applied."""


def confine(config: dict, status: dict | None = None) -> dict:
    """Apply every in-process restriction of `config` to this process; return what is enforced.

    What a fork server calls in a fresh child before running solver.py (then report_status); the
    child joins the run's cgroup first (`join_cgroup`, before any namespace), as spawn_contained does.
    Raises SetupFailed when a required restriction cannot be applied.
    """
    status = {"landlock_abi": 0, "writes_confined": False, "reads_confined": False, "tcp_blocked": False,
              "scoped": False, "unix_sockets_blocked": False, "keyrings_blocked": False, "socket_families": [],
              "foreign_abi_blocked": False, **(status or {})}
    limits = config.get("limits", {})
    if limits.get("max_processes"):
        status["process_cap"] = cap_processes(limits["max_processes"], status.get("pid_namespace", False),
                                              status.get("outer_uid", 1))
    mode = config.get("landlock", "best_effort")
    if mode != "off":
        try:
            status.update(restrict_self(config["write_dirs"], config.get("write_files", []),
                                        config.get("read_dirs"), config.get("read_files")))
        except OSError as exc:
            status["landlock_error"] = str(exc)
            if mode == "required":
                raise SetupFailed(f"Landlock required but not applied: {exc}") from exc
    if config.get("block_unix_sockets", True):
        try:
            status.update(block_unix_sockets())
        except OSError as exc:
            status["seccomp_error"] = str(exc)
    try:
        status["rlimits"] = apply_rlimits({k: v for k, v in limits.items() if k != "max_processes"})
    except (OSError, ValueError) as exc:
        raise SetupFailed(f"could not set rlimits: {exc}") from exc
    return status


def confine_and_exec(config: dict, command: list[str], status: dict | None = None) -> int:
    """Restrict this process as `config` says, report it, exec `command`; returns only on failure."""
    if not confine_and_report(config, status):
        return EXIT_SETUP_FAILED
    os.execvp(command[0], command)  # the environment was scrubbed by the parent
    return EXIT_SETUP_FAILED  # not reached


def confine_and_report(config: dict, status: dict | None = None) -> bool:
    """`confine`, then `report_status`; False (the reason on stderr) when a required restriction failed."""
    try:
        status = confine(config, status)
    except SetupFailed as exc:
        print(f"datasolver sandbox: {exc}", file=sys.stderr)
        return False
    report_status(config, status)
    return True


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


def probe() -> dict:
    """Which containment works here: namespaces (in a throwaway child), Landlock, seccomp."""
    found = {"landlock_abi": landlock_abi(), "namespaces": False, "seccomp": platform.machine() in _SECCOMP_ARCH}
    read_fd, write_fd = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_fd)
        try:
            enter_namespaces()
            grandchild = os.fork()
            if grandchild == 0:
                limit = cap_processes(64, True)
                os.write(write_fd, json.dumps({"namespaces": True, "pid_max": "pid_max" in limit}).encode())
                os._exit(0)
            os.waitpid(grandchild, 0)
        except BaseException as exc:  # report, never unwind into the caller
            os.write(write_fd, json.dumps({"namespaces": False, "namespace_error": str(exc)}).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as fh:
        data = fh.read()
    os.waitpid(child, 0)
    try:
        found.update(json.loads(data or b"{}"))
    except ValueError:
        pass
    return found


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--probe"]:
        print(json.dumps(probe()))
        return 0
    config = json.loads(argv[1])
    command = argv[argv.index("--") + 1 :]
    return spawn_contained(config, command)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
