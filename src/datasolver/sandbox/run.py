"""Run a command in the solver sandbox and supervise it from the parent: pipes for its output,
the wall-clock timeout, tree-wide memory and disk budgets, and killing the whole tree on every
way out. The confinement itself is applied by sandbox_launch.py (namespaces, Landlock, seccomp,
rlimits). What it does and does not guarantee: docs/sandbox.md.
"""

from __future__ import annotations

import functools
import json
import os
import re
import select
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping, Protocol

from datasolver.sandbox import cgroup as sandbox_cgroup
from datasolver.sandbox import launch as sandbox_launch
from datasolver.sandbox.errors import SandboxError
from datasolver.sandbox.fork_server import ForkServer, current_fork_server
from datasolver.sandbox.policy import SandboxLimits, launch_config, scrub_env
from datasolver.sandbox.watch import TreeWatch, kill_tree

OUTPUT_TAIL_BYTES = 64 * 1024
STATUS_BYTES = 64 * 1024
_POLL_S = 0.05  # how often the supervisor looks at the process between pipe reads
_EXIT_GRACE_S = 0.5  # reading output left in the pipes after the process ended
STOPPED_REASON = "the parent process is stopping (interrupted or terminated)"

# Every run this process supervises (launcher pid → its stop flag), so that `stop_all_runs` can end
# them from any thread: a run waiting in a worker thread would otherwise hold the process until its
# own timeout after Ctrl-C, because the interpreter joins worker threads on the way out.
_live_lock = threading.Lock()
_live_runs: dict[int, threading.Event] = {}


def stop_all_runs() -> int:
    """Kill every sandboxed run of this process now (their results say why); returns how many."""
    with _live_lock:
        runs = list(_live_runs.items())
    for pid, stop in runs:
        stop.set()
        kill_tree(pid)
    return len(runs)

@dataclass
class SandboxRun:
    """Outcome of one sandboxed run: exit status, captured output tails and the guards in force."""

    returncode: int | None
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    guards: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    killed_for: str | None = None  # a tree-wide budget (memory, disk) the parent enforced
    warm: bool = False  # forked from the fork server's zygote rather than a fresh interpreter

    @property
    def signal_name(self) -> str | None:
        """Name of the signal that ended the process (SIGKILL, SIGXCPU…), if any."""
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


def landlock_abi() -> int:
    """Landlock ABI of this kernel (0: unavailable); file-system confinement needs >= 1."""
    return sandbox_launch.landlock_abi()


@functools.cache
def kernel_features() -> dict:
    """What the launcher can use on this machine (probed once per process, in a throwaway child)."""
    if sys.platform != "linux":
        return {"landlock_abi": 0, "namespaces": False, "seccomp": False, "pid_max": False}
    try:
        probe = subprocess.run([sys.executable, "-S", "-E", sandbox_launch.__file__, "--probe"],
                               capture_output=True, timeout=30)
        return json.loads(probe.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return {"landlock_abi": landlock_abi(), "namespaces": False, "seccomp": False, "pid_max": False}


def run_sandboxed(
    argv: list[str],
    *,
    cwd: Path,
    write_dirs: list[Path],
    log_dir: Path,
    limits: SandboxLimits = SandboxLimits(),
    env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
    read_dirs: list[Path] | None = None,
    fork_server: ForkServer | None | Literal[False] = None,
    clock: Callable[[], float] = time.monotonic,
) -> SandboxRun:
    """Run `argv` confined to writing beneath `write_dirs`; output comes back through pipes.

    Reads are confined to `read_allowlist(read_dirs or [cwd], write_dirs)`. `env` defaults to
    os.environ and is always scrubbed; HOME/TMPDIR point at `log_dir` (one of `write_dirs`; the
    parent writes nothing there). Raises SandboxError only when the sandbox cannot be set up.

    `fork_server` (default: the one in use, `fork_server.use_fork_server`; False: never) forks a
    `python SCRIPT` / `python -c CODE` run from a warm zygote instead of starting a fresh
    interpreter, under the same sandbox; when it cannot, or dies during the run, the run goes cold.
    `clock` is what `limits.timeout_s` is measured on (a test can make the deadline come when it wants).
    """
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    for d in write_dirs:
        if not Path(d).is_dir():
            raise SandboxError(f"writable folder {d} does not exist")
    run_env, refused = scrub_env(os.environ if env is None else env, extra=extra_env, home=log_dir)
    notes = [f"refused secret-like variable {name}" for name in refused]
    run_env.setdefault("PYTHONIOENCODING", "utf-8")
    run_env["PYTHONUNBUFFERED"] = "1"  # output survives a kill
    run_env["PYTHONDONTWRITEBYTECODE"] = "1"
    server = current_fork_server() if fork_server is None else (fork_server or None)
    if server is not None:
        run = _run(argv, cwd, write_dirs, limits, read_dirs, run_env, notes, server, clock)
        if run is not None:
            return run
    return _run(argv, cwd, write_dirs, limits, read_dirs, run_env, notes, None, clock)


def _run(argv: list[str], cwd: Path, write_dirs: list[Path], limits: SandboxLimits, read_dirs: list[Path] | None,
         run_env: dict[str, str], notes: list[str], server: ForkServer | None,
         clock: Callable[[], float] = time.monotonic) -> SandboxRun | None:
    """One run, warm through `server` or cold; None when the warm run could not start or was lost."""
    status_r, status_w = os.pipe()
    config, allow_notes = launch_config(write_dirs, limits, read_dirs=read_dirs or [Path(cwd)], status_fd=status_w)
    group, group_kind = sandbox_cgroup.create(limits.tree_memory_bytes, limits.max_processes)
    if group is not None:
        config["cgroup_procs"] = group.procs_files  # the launcher joins before it forks anything
    started = time.monotonic()
    proc: _Process
    try:
        if server is not None:
            warm = server.spawn(argv, cwd=Path(cwd), env=run_env, config=config, status_w=status_w)
            if warm is None:
                os.close(status_r)
                if group is not None:
                    group.remove()
                return None
            proc = warm
        else:
            proc = _ColdProcess(argv, cwd, run_env, config, status_w)
    except OSError as exc:
        os.close(status_r)
        if group is not None:
            group.remove()
        raise SandboxError(f"cannot start sandboxed process: {exc}") from exc
    finally:
        os.close(status_w)
    out, err, status = _Tail(), _Tail(), _Tail(STATUS_BYTES)
    streams = {proc.stdout_fd: out, proc.stderr_fd: err, status_r: status}
    watch = TreeWatch(proc.pid, limits.tree_memory_bytes, limits.disk_bytes, [Path(d) for d in write_dirs],
                      max_files=limits.max_files, cgroup=group)
    stop = threading.Event()
    with _live_lock:
        _live_runs[proc.pid] = stop
    try:
        timed_out, killed_for = _supervise(proc, streams, limits.timeout_s, watch, clock)
        if stop.is_set():
            timed_out, killed_for = False, STOPPED_REASON
    finally:
        with _live_lock:
            _live_runs.pop(proc.pid, None)
        # Whatever the solver left running goes too, on every path out (timeout, exit, exception,
        # KeyboardInterrupt); in a PID namespace the launcher's death ends every process in it.
        lost = getattr(proc, "lost", False) and not stop.is_set()  # a stopped run is not redone
        if not getattr(proc, "lost", False):
            kill_tree(proc.pid)
        proc.release()
        os.close(status_r)
        oom_kills = group.oom_kills() if group is not None else 0
        peak = (group.memory_peak() if group is not None else None) or 0
        if group is not None:
            group.remove()
    if lost:  # the zygote died during the run (and the run with it)
        notes.append("the fork server died during the run; it ran again cold")
        return None
    duration = time.monotonic() - started
    if oom_kills and not (killed_for or timed_out):  # a burst that ended between two polls
        killed_for = watch.over_budget()

    guards = _parse_status(status.data())
    guards["peak_tree_memory_bytes"] = max(watch.peak_memory, peak)
    if group is not None and guards.get("cgroup_joined"):
        guards["tree_cgroup"] = group_kind
    else:
        guards.setdefault("cgroup_error", group_kind)
    notes = notes + allow_notes + _guard_notes(guards, limits)
    if killed_for:
        notes.append(f"killed: {killed_for}")
    return SandboxRun(
        killed_for=killed_for,
        returncode=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration_s=duration,
        stdout=out.text(),
        stderr=err.text(),
        guards=guards,
        notes=notes,
        warm=server is not None,
    )


class _Process(Protocol):
    """What the supervisor needs of a run, cold (a launcher child of ours) or warm (a zygote's child)."""

    pid: int
    stdout_fd: int
    stderr_fd: int
    end_fd: int | None  # readable once the run has ended (None: the supervisor polls)
    returncode: int | None

    def ended(self) -> bool: ...

    def release(self) -> None: ...


class _ColdProcess:
    """A fresh launcher (`python -S -E sandbox_launch.py CONFIG -- argv`), a child of this process."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], config: dict, status_w: int) -> None:
        command = [sys.executable, "-S", "-E", sandbox_launch.__file__, json.dumps(config), "--", *argv]
        # Output comes back through pipes, never through files the sandbox could swap for a
        # symlink or a FIFO; the launcher's facts come through a pipe solver.py never holds.
        self._popen = subprocess.Popen(
            command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, pass_fds=(status_w,),
            start_new_session=True,  # own process group: one killpg ends every descendant
        )
        self.pid = self._popen.pid
        self.stdout_fd, self.stderr_fd = self._popen.stdout.fileno(), self._popen.stderr.fileno()
        try:
            self.end_fd: int | None = os.pidfd_open(self.pid)  # readable at exit; reaps nothing
        except (AttributeError, OSError):
            self.end_fd = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def ended(self) -> bool:
        """Whether the launcher has ended, without reaping it: until it is reaped its pid (and
        process group id) cannot be reused, so killing its tree can never hit another process."""
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def release(self) -> None:
        self._popen.wait()
        self._popen.stdout.close()
        self._popen.stderr.close()
        if self.end_fd is not None:
            os.close(self.end_fd)
            self.end_fd = None


class _Tail:
    """The last `limit` bytes of a stream (memory stays bounded whatever the process prints)."""

    def __init__(self, limit: int = OUTPUT_TAIL_BYTES) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        self._buf += data
        if len(self._buf) > 2 * self.limit:
            del self._buf[: -self.limit]

    def data(self) -> bytes:
        return bytes(self._buf[-self.limit :])

    def text(self) -> str:
        text = self.data().decode("utf-8", errors="replace")
        return text if self.total <= self.limit else "…" + text


def _supervise(proc: _Process, streams: dict[int, _Tail], timeout_s: float, watch: TreeWatch,
               clock: Callable[[], float] = time.monotonic) -> tuple[bool, str | None]:
    """Drain the pipes until the process ends: (the timeout killed it, why the watch killed it).

    Once it has ended the pipes are read for a short grace only: a descendant that still holds
    them cannot keep the parent waiting. The timeout and the grace are measured on `clock`; the
    watch samples on its own (real) clock.
    """
    deadline = clock() + timeout_s
    open_fds = set(streams)
    timed_out, killed_for = False, None
    drain_until: float | None = None  # set once the process has ended
    with selectors.DefaultSelector() as sel:
        for fd in open_fds:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        if proc.end_fd is not None:  # wake at the end itself, not at the next poll
            sel.register(proc.end_fd, selectors.EVENT_READ)
        while open_fds:
            now = clock()
            if drain_until is None:
                ended = proc.ended()
                if not ended and now >= deadline:
                    timed_out = True
                    kill_tree(proc.pid)
                elif not ended and (killed_for := watch.over_budget()):
                    kill_tree(proc.pid)
                if ended or timed_out or killed_for:
                    drain_until = now + _EXIT_GRACE_S
                    if proc.end_fd is not None:
                        sel.unregister(proc.end_fd)
            elif now >= drain_until:
                break
            until = deadline if drain_until is None else drain_until
            for key, _ in sel.select(timeout=min(_POLL_S, max(0.0, until - now))):
                if key.fd not in open_fds:
                    continue  # the end: the next round sees it
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if chunk:
                    streams[key.fd].feed(chunk)
                else:
                    sel.unregister(key.fd)
                    open_fds.discard(key.fd)
    while drain_until is None and not proc.ended():  # every pipe closed while the process runs on
        now = clock()
        if now >= deadline:
            timed_out = True
            kill_tree(proc.pid)
            break
        if killed_for := watch.over_budget():
            kill_tree(proc.pid)
            break
        _wait_for_end(proc, min(_POLL_S, deadline - now))
    return timed_out, killed_for


def _wait_for_end(proc: _Process, timeout_s: float) -> None:
    """Until the run ends or `timeout_s` passes: its pipes can close (at exit) a moment before the
    end is reported, and a blind poll would add up to one interval to every run."""
    if proc.end_fd is None:
        time.sleep(timeout_s)
    else:
        select.select([proc.end_fd], [], [], timeout_s)


def _guard_notes(guards: dict, limits: SandboxLimits) -> list[str]:
    notes = []
    if not guards.get("writes_confined"):
        why = "switched off" if limits.landlock == "off" else guards.get("landlock_error", "unknown reason")
        notes.append(f"Landlock not applied ({why}): writes not confined to the task scratch folder")
    elif limits.confine_reads and not guards.get("reads_confined"):
        notes.append("reads not confined (Landlock could not handle reads)")
    if not guards.get("pid_namespace"):
        why = guards.get("namespace_error", "unavailable")
        notes.append(f"PID namespace not used ({why}): background processes are killed by process group and "
                     "parent links only")
    if limits.isolate_network and not guards.get("network_namespace"):
        notes.append("network namespace unavailable: only TCP is blocked (by Landlock, when present)")
    elif limits.isolate_ipc and not guards.get("ipc_namespace"):
        notes.append("IPC namespace not used: SysV shared memory and message queues outside are reachable")
    if limits.block_unix_sockets and not guards.get("unix_sockets_blocked"):
        why = guards.get("seccomp_error", "no seccomp filter")
        notes.append(f"socket families, io_uring and kernel keyrings not restricted ({why})")
    return notes


def _parse_status(data: bytes) -> dict:
    try:
        status = json.loads(data.decode("utf-8"))
    except ValueError:
        status = None
    if not isinstance(status, dict):
        return {"writes_confined": False, "landlock_error": "the launcher did not report (it failed before exec)"}
    return status
