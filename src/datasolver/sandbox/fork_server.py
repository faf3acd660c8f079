"""The parent side of the fork server: start a zygote (zygote.py) for a batch and hand it runs.

A `ForkServer` is made once per batch and started from the thread that lives as long as the batch
(the zygote dies with that thread: PR_SET_PDEATHSIG) once the first task's model has answered
(`prestart_fork_server`), with a scrubbed environment and the thread pools
of the preloaded libraries at one thread. `run_sandboxed` uses it for `python SCRIPT` and
`python -c CODE` commands of this interpreter when one is in use (`use_fork_server`, or its
`fork_server` argument); anything else, a zygote that is not ready, failed or has died, runs cold
(a fresh launcher and interpreter) with the same sandbox. What a warm run guarantees and what
differs: docs/sandbox.md.
"""

from __future__ import annotations

import array
import contextlib
import contextvars
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from datasolver.sandbox.policy import scrub_env

# What a Python data program imports; the last three are imported lazily by a first DataFrame
# from DuckDB and a first to_csv (~15 ms per run, most of it compiling a version regex).
DATA_STACK = ("numpy", "pandas", "pyarrow", "duckdb", "pyarrow.pandas_compat", "pyarrow.vendored.version",
              "pandas.io.formats.csvs")
ZYGOTE = Path(__file__).with_name("zygote.py")  # run by path: it imports nothing of datasolver but what it preloads
READY_TIMEOUT_S = 60.0  # importing pandas and duckdb on a loaded machine
SPAWN_TIMEOUT_S = 10.0  # the zygote answers a request with the child's pid
# The preloaded libraries start no thread pool in the zygote (a forked child keeps none of them).
_SINGLE_THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "JE_ARROW_MALLOC_CONF": "background_thread:false",  # pyarrow's jemalloc starts a thread otherwise
}

_current: contextvars.ContextVar[ForkServer | None] = contextvars.ContextVar("datasolver_fork_server", default=None)


def current_fork_server() -> ForkServer | None:
    """The fork server of the batch this code runs in (asyncio tasks and to_thread inherit it)."""
    return _current.get()


def prestart_fork_server() -> None:
    """Start the fork server in use unless it has started: call from the batch's thread when
    solver.py runs are near (a task's model has answered), so that the zygote's imports (~0.6
    CPU-s) overlap model turns instead of the first tasks' briefs."""
    server = _current.get()
    if server is not None:
        server.start()


@contextlib.contextmanager
def use_fork_server(server: ForkServer | None) -> Iterator[ForkServer | None]:
    """Sandboxed runs inside this block (and the tasks and threads it starts) go through `server`."""
    token = _current.set(server)
    try:
        yield server
    finally:
        _current.reset(token)


class WarmProcess:
    """A run the zygote forked: its pid (a child of the zygote, not of this process), output pipes,
    and the socket on which the zygote reports its end."""

    def __init__(self, pid: int, sock: socket.socket, stdout: int, stderr: int) -> None:
        self.pid, self._sock = pid, sock
        self.stdout_fd, self.stderr_fd = stdout, stderr
        self.end_fd: int | None = sock.fileno()  # the zygote's report of the end arrives here
        self.returncode: int | None = None
        self.lost = False  # the zygote died before reporting the end (the run died with it)
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except OSError:
            self._pidfd = None

    def ended(self) -> bool:
        """Whether the run has ended (the zygote keeps it unreaped until `release`)."""
        if self.returncode is not None or self.lost:
            return True
        try:
            data = self._sock.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self.lost = True
            self._kill_child()
            return True
        message = json.loads(data)
        if "exit" in message:
            self.returncode = int(message["exit"])
            return True
        return False

    def _kill_child(self) -> None:
        """The zygote is gone, so the pid may be reaped and reused: signal it through its pidfd only."""
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass

    def release(self) -> None:
        """Close the run: the zygote reaps it (or kills it first when still running), fds closed."""
        if self.lost:
            self._kill_child()
        for fd in (self.stdout_fd, self.stderr_fd, self._pidfd):
            if fd is not None:
                os.close(fd)
        self._pidfd = None
        self.end_fd = None
        self._sock.close()


class ForkServer:
    """One zygote process with `preload` imported (the data stack and what the caller adds); forks runs on request."""

    def __init__(self, *, python: str = sys.executable, preload: tuple[str, ...] = DATA_STACK,
                 preload_env: Mapping[str, str] | None = None) -> None:
        self.python = python
        self.preload = preload
        self._env = preload_env
        self._proc: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._ready: bool | None = None  # None: not heard from yet
        self.failure = ""  # why it is not used (empty while usable)
        self.threads: int | None = None  # threads the zygote had when ready (must be 1)
        self.runs_started = 0

    def start(self) -> ForkServer:
        """Start the zygote (it imports in the background; the first run waits until it is ready).
        Starting again does nothing; a run on a server never started starts it first."""
        with self._starting:
            if self._proc is None and self._ready is None:
                self._start()
        return self

    def _start(self) -> None:
        if sys.platform != "linux" or not hasattr(os, "pidfd_open"):
            self.failure = "the fork server needs Linux with pidfd_open"
            self._ready = False
            return
        env, _ = scrub_env(os.environ if self._env is None else self._env)
        env.update(_SINGLE_THREAD_ENV)
        env.update(PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
        package_root = str(ZYGOTE.resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [self.python, str(ZYGOTE), str(os.getpid()), str(theirs.fileno()), ",".join(self.preload)],
                cwd="/", env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), start_new_session=True,
            )
        except OSError as exc:
            mine.close()
            self.failure, self._ready = f"cannot start the fork server: {exc}", False
            return
        finally:
            theirs.close()
        self._control = mine

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def usable(self) -> bool:
        """Whether runs can go to the zygote now (waits for it to be ready the first time)."""
        with self._lock:
            return self._wait_ready()

    def _wait_ready(self) -> bool:
        if self._ready is None and self._control is None:
            self.start()
        if self._ready is None:
            assert self._control is not None
            self._control.settimeout(READY_TIMEOUT_S)
            try:
                data = self._control.recv(4096)
                message = json.loads(data) if data else {"error": "it exited while importing"}
            except (OSError, ValueError) as exc:
                message = {"error": f"no answer ({exc})"}
            self._control.settimeout(None)
            self._ready = bool(message.get("ready"))
            self.threads = message.get("threads")
            if not self._ready:
                why = message.get("error") or f"it has {message.get('threads')} threads, not 1"
                self._fail(f"the fork server is not usable: {why}")
        return bool(self._ready)

    def _fail(self, why: str) -> None:
        self._ready = False
        self.failure = self.failure or why
        if self._control is not None:
            self._control.close()
            self._control = None

    @staticmethod
    def accepts(argv: list[str]) -> bool:
        """Whether a command can run warm: this interpreter with a script or `-c CODE`."""
        if len(argv) < 2 or argv[0] != sys.executable:
            return False
        return (argv[1] == "-c" and len(argv) >= 3) or not argv[1].startswith("-")

    def spawn(self, argv: list[str], *, cwd: Path, env: Mapping[str, str], config: dict,
              status_w: int) -> WarmProcess | None:
        """Fork a run in the zygote; None when it cannot (the caller runs cold)."""
        if not self.accepts(argv):
            return None
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = json.dumps({"argv": list(argv), "cwd": str(cwd), "env": dict(env), "config": config}).encode()
        sent = False
        try:
            with self._lock:
                if self._wait_ready() and self._control is not None:
                    fds = array.array("i", [theirs.fileno(), out_w, err_w, status_w])
                    try:
                        self._control.sendmsg([request], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
                        sent = True
                    except OSError as exc:
                        self._fail(f"the fork server died ({exc})")
        finally:
            theirs.close()
            os.close(out_w)
            os.close(err_w)
        reply: dict = {}
        if sent:
            mine.settimeout(SPAWN_TIMEOUT_S)
            try:
                data = mine.recv(4096)
                reply = json.loads(data) if data else {"lost": "the fork server died"}
            except (OSError, ValueError) as exc:
                reply = {"lost": f"the fork server stopped answering ({exc})"}
            mine.settimeout(None)
        if "pid" not in reply:
            if "lost" in reply:
                with self._lock:
                    self._fail(reply["lost"])
            mine.close()
            os.close(out_r)
            os.close(err_r)
            return None
        with self._lock:
            self.runs_started += 1
        return WarmProcess(int(reply["pid"]), mine, out_r, err_r)

    def close(self) -> None:
        """Stop the zygote (closing the control socket ends it; runs still going die with it)."""
        with self._lock:
            if self._control is not None:
                self._control.close()
                self._control = None
            self._ready = False
        if self._proc is not None:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def __enter__(self) -> ForkServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
