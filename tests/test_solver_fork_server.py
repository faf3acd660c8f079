"""The fork server (warm runs): same results and error texts as a cold run, nothing of the zygote
reachable from a run, a clean fall-back to the cold path when the zygote is unusable or dies.

The sandbox's guarantees themselves are checked on both paths by the sandbox and hostile tests
(the `sandbox_path` fixture in conftest.py).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from datasolver.data import ScratchLayout
from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.solver import SolverToolbox, restore_scaffold
from datasolver.solver.prepare import prepare_task
from datasolver.sandbox.fork_server import ForkServer, current_fork_server, use_fork_server
from datasolver.solver.runner import run_solver_script
from tests.helpers.solver import make_tiny_task, set_query

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork server is Linux only")


def both(work: Path, argv_tail: list[str], server: ForkServer, **limits):
    """(cold run, warm run) of `python ARGV_TAIL` in `work`."""
    kwargs = dict(cwd=work, write_dirs=[work], log_dir=work, limits=SandboxLimits(timeout_s=30, **limits))
    cold = run_sandboxed([sys.executable, *argv_tail], fork_server=False, **kwargs)
    warm = run_sandboxed([sys.executable, *argv_tail], fork_server=server, **kwargs)
    assert not cold.warm and warm.warm, warm.notes
    return cold, warm


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_a_server_starts_once_when_prestarted_or_first_used(work: Path) -> None:
    from datasolver.sandbox.fork_server import prestart_fork_server

    server = ForkServer()
    try:
        assert server.pid is None
        with use_fork_server(server):
            prestart_fork_server()  # the batch's thread, once a task's model has answered
            pid = server.pid
            assert pid is not None
            prestart_fork_server()
            assert server.start() is server and server.pid == pid  # started once
    finally:
        server.close()
    never_prestarted = ForkServer()
    try:
        _, warm = both(work, ["-c", "print('hi')"], never_prestarted)  # the first run starts it
        assert warm.stdout == "hi\n"
    finally:
        never_prestarted.close()
    prestart_fork_server()  # no server in use: nothing to start


def test_the_zygote_is_single_threaded_when_ready(fork_server: ForkServer) -> None:
    assert fork_server.usable(), fork_server.failure
    assert fork_server.threads == 1


def test_a_warm_run_finds_the_preloaded_objects_frozen(work: Path, fork_server: ForkServer) -> None:
    code = "import gc, sys\nprint(gc.get_freeze_count() > 10000, 'pandas.io.formats.csvs' in sys.modules)"
    cold, warm = both(work, ["-c", code], fork_server)
    assert cold.stdout.split() == ["False", "False"]
    # Outside the collector's view: a run's full collection copies none of the zygote's pages.
    assert warm.stdout.split() == ["True", "True"]


@pytest.mark.parametrize("code", [
    "import sys\nprint('out', sys.argv, sys.path[0] == '', __name__)\nprint('err', file=sys.stderr)",
    "def f():\n    return 1 / 0\nprint('before')\nf()",
    "import sys\nsys.exit('a message')",
    "import sys\nsys.exit(3)",
    "raise SystemExit",
    "x = (",
    "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()",
    "import atexit\natexit.register(print, 'at exit')\nprint('main')",
    "import os, tempfile\nprint(tempfile.gettempdir() == os.getcwd(), os.environ['HOME'] == os.getcwd())",
    "import os\nprint(sorted(int(fd) for fd in os.listdir('/proc/self/fd'))[:3])",
])
def test_a_warm_run_prints_and_exits_as_a_cold_one(work: Path, fork_server: ForkServer, code: str) -> None:
    cold, warm = both(work, ["-c", code], fork_server)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert {k: v for k, v in warm.guards.items() if k != "peak_tree_memory_bytes"} == \
        {k: v for k, v in cold.guards.items() if k != "peak_tree_memory_bytes"}
    assert warm.notes == cold.notes


def test_a_script_gets_its_own_argv_path_and_traceback(work: Path, fork_server: ForkServer) -> None:
    script = work / "prog.py"
    script.write_text(
        "import sys\nprint(sys.argv, sys.path[0], __file__, __name__)\n"
        "def g(x):\n    return {}[x]\n"
        "g(sys.argv[1])\n", encoding="utf-8")
    cold, warm = both(work, [str(script), "key"], fork_server)
    assert cold.returncode == warm.returncode == 1
    assert warm.stdout == cold.stdout == f"{[str(script), 'key']} {work} {script} __main__\n"
    assert warm.stderr == cold.stderr and warm.stderr.startswith("Traceback (most recent call last):\n  File")
    assert "zygote" not in warm.stderr


def test_a_missing_script_and_a_syntax_error_read_the_same(work: Path, fork_server: ForkServer) -> None:
    (work / "bad.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    for name in ("bad.py", "missing.py"):
        cold, warm = both(work, [str(work / name)], fork_server)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), name
        assert warm.returncode != 0


def test_runs_do_not_see_each_other(work: Path, fork_server: ForkServer) -> None:
    first = run_sandboxed([sys.executable, "-c", "import pandas\npandas.LEFT_BEHIND = 1\nimport json\njson.x = 2"],
                          cwd=work, write_dirs=[work], log_dir=work, fork_server=fork_server)
    second = run_sandboxed([sys.executable, "-c", "import pandas, json\n"
                            "print(hasattr(pandas, 'LEFT_BEHIND'), hasattr(json, 'x'))"],
                           cwd=work, write_dirs=[work], log_dir=work, fork_server=fork_server)
    assert first.warm and first.returncode == 0 and second.stdout == "False False\n"


def test_nothing_of_the_zygote_or_its_parent_reaches_a_run(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_API_KEY", "sk-before-the-zygote")
    monkeypatch.setenv("SOME_SETTING", "visible-to-the-zygote-only")
    with ForkServer() as server:
        code = (
            "import os\n"
            "print(sorted(k for k in os.environ if k in ('MODEL_API_KEY', 'SOME_SETTING')))\n"
            f"for path in ('/proc/{server.pid}/environ', '/proc/{server.pid}/cmdline', '/proc/{os.getpid()}/environ'):\n"
            "    try:\n        open(path, 'rb').read(); print('READ', path)\n"
            "    except OSError as exc:\n        print('denied', type(exc).__name__)\n"
            f"try:\n    os.kill({server.pid}, 0); print('signalled the zygote')\n"
            "except OSError as exc:\n    print('kill', type(exc).__name__)\n"
        )
        run = run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                            fork_server=server, env={"PATH": os.defpath})
    assert run.warm and run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "[]" and "READ" not in run.stdout and "signalled" not in run.stdout, run.stdout


def test_an_unusable_zygote_means_cold_runs(work: Path) -> None:
    with ForkServer(python=str(work / "no-such-python")) as server:
        run = run_sandboxed([sys.executable, "-c", "print('cold')"], cwd=work, write_dirs=[work], log_dir=work,
                            fork_server=server)
        assert not server.usable() and server.failure
    assert not run.warm and run.stdout == "cold\n"


def test_commands_other_than_python_code_run_cold(work: Path, fork_server: ForkServer) -> None:
    for argv in (["/bin/echo", "hi"], [sys.executable, "-m", "this"]):
        run = run_sandboxed(argv, cwd=work, write_dirs=[work], log_dir=work, fork_server=fork_server)
        assert not run.warm and run.returncode == 0, (argv, run.stderr)


def test_a_killed_zygote_falls_back_to_cold_runs(work: Path) -> None:
    with ForkServer() as server:
        assert server.usable()
        os.kill(server.pid, signal.SIGKILL)
        run = run_sandboxed([sys.executable, "-c", "print('still answered')"], cwd=work, write_dirs=[work],
                            log_dir=work, fork_server=server)
        assert not run.warm and run.returncode == 0 and run.stdout == "still answered\n"
        assert not server.usable() and "died" in server.failure


def test_a_zygote_killed_during_a_run_means_the_run_is_redone_cold(work: Path) -> None:
    marker = work / "started"
    # The first (warm) run marks itself and waits on an event nothing sets (it dies with the
    # zygote); the second (cold) one finds the mark and ends.
    code = (f"import threading\nopen({str(marker)!r}, 'a').write('x')\n"
            f"if len(open({str(marker)!r}).read()) == 1:\n    threading.Event().wait()\nprint('done')")
    with ForkServer() as server:
        assert server.usable()

        def kill_when_started() -> None:
            deadline = time.monotonic() + 30
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            os.kill(server.pid, signal.SIGKILL)

        killer = threading.Thread(target=kill_when_started)
        killer.start()
        run = run_sandboxed([sys.executable, "-c", code], cwd=work, write_dirs=[work], log_dir=work,
                            fork_server=server, limits=SandboxLimits(timeout_s=60))
        killer.join()
    assert not run.warm and run.returncode == 0 and run.stdout == "done\n", (run.stdout, run.stderr)
    assert marker.read_text() == "xx"  # the warm run started, then the cold one
    assert "the fork server died during the run; it ran again cold" in run.notes


def test_solver_py_runs_the_same_warm_and_cold(tmp_path: Path, fork_server: ForkServer) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    outcomes = []
    for query in ("result = run_sql('SELECT city, SUM(amount) AS total FROM orders GROUP BY city ORDER BY 1')",
                  "result = run_sql('SELECT nope FROM orders')"):
        restore_scaffold(ScratchLayout.of(root))
        with SolverToolbox(ScratchLayout.of(root)) as box:
            set_query(box, query)
        for server in (None, fork_server):
            with use_fork_server(server):
                run = run_solver_script(ScratchLayout.of(root), SandboxLimits(timeout_s=60))
            assert run.sandbox.warm == (server is not None)
            text = run.prediction.read_text(encoding="utf-8") if run.prediction else None
            outcomes.append((run.status, run.error, text))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == "OK"
    assert outcomes[2] == outcomes[3] and outcomes[2][0] == "FAILED" and "nope" in outcomes[2][1]


def test_the_server_in_use_follows_the_context(fork_server: ForkServer) -> None:
    outer = current_fork_server()  # the session's (tests run warm by default; see conftest)
    with use_fork_server(None):
        assert current_fork_server() is None
        with use_fork_server(fork_server):
            assert current_fork_server() is fork_server
        assert current_fork_server() is None
    assert current_fork_server() is outer
