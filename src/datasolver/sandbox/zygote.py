"""The fork server (zygote): a Python process that has already imported what its runs import
(pandas, duckdb, … : the caller's list) and forks one sandboxed child per run.

Run by path as `python zygote.py PARENT_PID CONTROL_FD MODULE,MODULE…` (see fork_server.py, the parent side).
It stays single-threaded (the parent sets the thread-pool variables of the preloaded libraries;
the ready message carries the count of threads, and the parent refuses a zygote with more than
one), so every child is a clean copy that can still enter new namespaces.

Per request (argv, cwd, environment, the launcher's configuration, and four file descriptors by
SCM_RIGHTS: the run's own socket and the write ends of its stdout, stderr and facts pipes) it
forks a child that starts a new session, takes the pipes as fds 0-2, closes everything else of
the zygote, switches to the run's folder and environment, and then goes through exactly the
cold launcher's steps (`launch.spawn_contained`: PR_SET_PDEATHSIG, user + PID + network
namespaces with a reaper as PID 1, `confine` with Landlock, seccomp and rlimits, the facts sent
and their pipe closed), except that the last one runs the Python program in place instead of
exec'ing a fresh interpreter. On the run's socket the zygote answers the child's pid, then its
exit status once it ends, and reaps it only when the parent closes that socket (until then the
pid and process group cannot be reused, so the parent's kills cannot hit another process).
The zygote exits when the control socket closes and dies with its parent (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.path.pop(0)  # run by path: never let a sibling module shadow the stdlib

import array
import gc
import importlib.util
import json
import os
import selectors
import signal
import socket
from pathlib import Path

MESSAGE_BYTES = 1 << 20  # largest request (configuration + environment)
FDS_PER_REQUEST = 4  # run socket, stdout, stderr, facts
EXIT_SETUP_FAILED = 125


def _load_launcher():
    """launch.py by path (importing the datasolver package would load more than the launcher)."""
    path = Path(__file__).with_name("launch.py")
    spec = importlib.util.spec_from_file_location("datasolver_sandbox_launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


launcher = _load_launcher()


def thread_count() -> int:
    """Threads of this process now (the zygote must stay at one until it forks)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


class _Run:
    """One child the zygote forked: its socket to the parent and its pidfd."""

    def __init__(self, pid: int, sock: socket.socket, pidfd: int) -> None:
        self.pid, self.sock, self.pidfd = pid, sock, pidfd
        self.exited = False
        self.released = False


class Zygote:
    """The serving loop; single-threaded, select over the control socket, run sockets and pidfds."""

    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.selector = selectors.DefaultSelector()
        self.selector.register(control, selectors.EVENT_READ, ("control", None))
        self.runs: dict[int, _Run] = {}

    def serve(self) -> None:
        while True:
            for key, _ in self.selector.select():
                kind, run = key.data
                if kind == "control":
                    if not self._request():
                        return
                elif kind == "exit":
                    self._exited(run)
                else:
                    self._released(run)

    def _request(self) -> bool:
        try:
            data, ancdata, _, _ = self.control.recvmsg(MESSAGE_BYTES, socket.CMSG_SPACE(FDS_PER_REQUEST * 4),
                                                      socket.MSG_CMSG_CLOEXEC)
        except OSError:
            return False
        fds = array.array("i")
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        if not data:
            for fd in fds:
                os.close(fd)
            return False  # the parent closed the control socket: the batch is over
        if len(fds) != FDS_PER_REQUEST:
            for fd in fds:
                os.close(fd)
            return True
        run_fd, out_fd, err_fd, status_fd = fds
        run_sock = socket.socket(fileno=run_fd)
        try:
            request = json.loads(data)
            pid = os.fork()
        except (ValueError, OSError) as exc:
            _send(run_sock, {"error": f"the fork server could not start the run: {exc}"})
            run_sock.close()
            for fd in (out_fd, err_fd, status_fd):
                os.close(fd)
            return True
        if pid == 0:  # the run's child: never returns into this loop
            code = EXIT_SETUP_FAILED
            try:
                code = self._child(request, run_sock, out_fd, err_fd, status_fd)
            finally:
                os._exit(code)
        for fd in (out_fd, err_fd, status_fd):
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        run = _Run(pid, run_sock, pidfd)
        self.runs[pid] = run
        self.selector.register(pidfd, selectors.EVENT_READ, ("exit", run))
        self.selector.register(run_sock, selectors.EVENT_READ, ("release", run))
        _send(run_sock, {"pid": pid})
        return True

    def _exited(self, run: _Run) -> None:
        info = os.waitid(os.P_PID, run.pid, os.WEXITED | os.WNOWAIT)  # not reaped: the pid stays reserved
        returncode = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        run.exited = True
        self.selector.unregister(run.pidfd)
        if not run.released:
            _send(run.sock, {"exit": returncode})
        self._maybe_reap(run)

    def _released(self, run: _Run) -> None:
        try:
            more = run.sock.recv(64)
        except OSError:
            more = b""
        if more:
            return
        run.released = True
        self.selector.unregister(run.sock)
        run.sock.close()
        if not run.exited:  # the parent gave up on a live run: end it (pid still ours: not reaped)
            try:
                os.killpg(run.pid, signal.SIGKILL)
            except OSError:
                pass
        self._maybe_reap(run)

    def _maybe_reap(self, run: _Run) -> None:
        if run.exited and run.released:
            os.waitpid(run.pid, 0)
            os.close(run.pidfd)
            del self.runs[run.pid]

    def _child(self, request: dict, run_sock: socket.socket, out_fd: int, err_fd: int, status_fd: int) -> int:
        """In the forked child: become the run's launcher with the run's fds, folder and environment."""
        os.setsid()  # its own session and process group, as the cold launcher's start_new_session
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        # Nothing of the zygote stays open: its control socket, other runs' sockets and pidfds.
        run_sock.close()
        self.selector.close()
        self.control.close()
        for other in self.runs.values():
            other.sock.close()
            os.close(other.pidfd)
        keep = status_fd
        os.closerange(3, keep)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        config = dict(request["config"], status_fd=status_fd, parent_pid=os.getppid())
        return launcher.spawn_contained(config, request["argv"], become=_become)


def _become(config: dict, command: list[str], status: dict) -> int:
    """The run's last step in the fork server: the same confinement as the cold launcher, the
    facts sent and their pipe closed, then the Python program run in place."""
    if not launcher.confine_and_report(config, status):
        return EXIT_SETUP_FAILED
    return run_python(command)


def run_python(argv: list[str]) -> int:
    """Run `python SCRIPT ARGS…` or `python -c CODE ARGS…` in this process as a fresh interpreter
    would: a new `__main__` module, sys.argv and sys.path[0] as Python sets them, the traceback of
    an uncaught exception printed by sys.excepthook from the program's own first frame, SystemExit
    handled the same way, non-daemon threads and atexit handlers run at the end. Returns the
    exit status."""
    import tempfile
    import types

    tempfile.tempdir = None  # TMPDIR is the run's own now
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # fresh entropy, as a fresh interpreter has (random reseeds itself at fork)
    if argv[1] == "-c":
        filename, sys.argv = "<string>", ["-c", *argv[3:]]
        sys.path[0] = ""
    else:
        filename, sys.argv = argv[1], argv[1:]
        sys.path[0] = os.path.dirname(os.path.realpath(filename))
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=__builtins__, __spec__=None)
    if argv[1] != "-c":
        main.__dict__.update(__file__=filename, __cached__=None)
    sys.modules["__main__"] = main
    code = 0
    try:
        if argv[1] == "-c":
            source: str | bytes = argv[2]
        else:
            try:
                with open(filename, "rb") as fh:
                    source = fh.read()
            except OSError as exc:
                print(f"{sys.executable}: can't open file {filename!r}: [Errno {exc.errno}] {exc.strerror}",
                      file=sys.stderr)
                return 2
        try:
            compiled = compile(source, filename, "exec", dont_inherit=True)
        except SyntaxError as exc:
            sys.excepthook(type(exc), exc.with_traceback(None), None)  # as Python prints it: no traceback
            return 1
        exec(compiled, main.__dict__)
    except SystemExit as exc:
        code = _exit_status(exc)
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next  # drop the fork server's own frames
        tb = tb or exc.__traceback__
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        code = 1
        if isinstance(exc, KeyboardInterrupt):
            code = -signal.SIGINT
    code = _finish(code)
    if code < 0:  # as the interpreter does after an uncaught KeyboardInterrupt
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _exit_status(exc: SystemExit) -> int:
    """The status Python exits with for `SystemExit(code)` (a non-integer is printed, status 1)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _finish(code: int) -> int:
    """What the interpreter does on the way out: wait for non-daemon threads, run atexit, flush."""
    import atexit
    import threading

    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            if code == 0:
                code = 120  # the interpreter's status when flushing stdout fails at exit
    return code


def _send(sock: socket.socket, message: dict) -> None:
    try:
        sock.send(json.dumps(message).encode("utf-8"))
    except OSError:
        pass  # the parent is gone; its end of the socket tells us when to reap


def main(argv: list[str]) -> int:
    parent_pid, control_fd = int(argv[1]), int(argv[2])
    preload = [name for name in (argv[3] if len(argv) > 3 else "").split(",") if name]
    launcher.die_with_parent()
    control = socket.socket(fileno=control_fd)
    if os.getppid() != parent_pid:
        return 1  # the parent is already gone
    try:
        for name in preload:
            __import__(name)
        # The preloaded objects leave the collector's view: a run's full collection would
        # otherwise touch every one of them and copy each page they sit on (~110 ms per run).
        gc.freeze()
        threads = thread_count()
        control.send(json.dumps({"ready": threads == 1, "threads": threads}).encode("utf-8"))
    except Exception as exc:  # report why; the parent runs cold
        control.send(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}).encode("utf-8"))
        return 1
    if threads != 1:
        return 1
    Zygote(control).serve()
    # Nothing to flush or clean up here, and the interpreter's teardown of the preloaded modules
    # (pandas, pyarrow, duckdb) took ~0.7 s that the batch's close waited for.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
