"""Shared fixtures. No test may reach a real model endpoint or the network."""

from __future__ import annotations

import ipaddress
import os
import pickle
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.helpers.paths import DEV_TASKS
T = TypeVar("T")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` (each one long: a 40-task run, a server, a wheel build) run first.

    With `-n auto` the workers then share the long tests at the start, instead of one worker
    finishing a long test alone while the other has nothing left; the order is otherwise kept.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _no_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block real endpoints: tests configure the scripted server explicitly."""
    for var in ("MODEL_API_URL", "MODEL_API_KEY", "MODEL_NAME", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _no_outside_links_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--follow-outside-links` sets DATASOLVER_FOLLOW_OUTSIDE_LINKS in its own process (so the children
    it starts inherit the opt-in); a command run in-process (CliRunner) would leave it set for the
    worker's later tests, which would then read links out of their folders. Every test starts with
    the opt-in off, and whatever a test sets is undone after it."""
    monkeypatch.setenv("DATASOLVER_FOLLOW_OUTSIDE_LINKS", "")


@pytest.fixture(scope="session")
def _cache_roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {"DATASOLVER_DOC_CACHE": tmp_path_factory.mktemp("doc-cache"),
            "DATASOLVER_TABLE_CACHE": tmp_path_factory.mktemp("table-cache")}


@pytest.fixture(autouse=True)
def _private_caches(monkeypatch: pytest.MonkeyPatch, _cache_roots: dict[str, Path]) -> None:
    """Document tables and loaded tables that `tables`, `sql`, `ask` and `mcp` keep go to the run's
    temp folder, never ~/.cache."""
    for variable, root in _cache_roots.items():
        monkeypatch.setenv(variable, str(root))


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests may talk to servers on this machine (the scripted model, MCP over HTTP), nothing else."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(address: object) -> None:
        if isinstance(address, tuple) and address:
            host = str(address[0])
            try:
                loopback = ipaddress.ip_address(host.split("%")[0]).is_loopback
            except ValueError:
                loopback = host == "localhost"
            if not loopback:
                raise OSError(f"tests may not reach the network (tried {host})")

    def connect(self: socket.socket, address: object) -> None:
        check(address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: object) -> int:
        check(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def dev_tasks() -> Path:
    """../shared/tasks/dev, or skip: a user's clone has no ../shared."""
    if not (DEV_TASKS / "oracle.jsonl").is_file():
        pytest.skip(f"{DEV_TASKS} is absent (only present beside the project's own checkout)")
    return DEV_TASKS


def made_once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """`make(folder)` once per test run, however many xdist workers there are: the first worker
    to get here makes it under a file lock and pickles the result (an exact copy of the object);
    the others wait for the lock and unpickle it. The folder is shared, so treat it as read-only."""
    import fcntl  # POSIX; the media tests need Linux tools anyway

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above each worker's popen-gwN
    folder, lock_path = root / f"once-{name}", root / f"once-{name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "made.pickle"
        if done.is_file():
            return pickle.loads(done.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)  # a worker whose make() failed may have left half
        folder.mkdir()
        made = make(folder)
        done.write_bytes(pickle.dumps(made))
        return made


@pytest.fixture(scope="session")
def dev_tables(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, tuple[int, str]]]:
    """`dev_tables(set_name)`: task id → (exit code, output) of `datasolver tables` on every raw task
    folder of ../shared/tasks/<set_name>, listed once per test run (each listing loads every table of
    40 tasks: ~7 CPU-s), or skip when the set is absent. The tests that use it share an xdist_group,
    so one worker lists and the next test reads, rather than one worker waiting on the other's lock."""
    from tests.helpers.devsets import tables_listings, task_set

    def listings(name: str) -> dict[str, tuple[int, str]]:
        root = task_set(name)
        if not (root / "oracle.jsonl").is_file():
            pytest.skip(f"{root} is absent (only present beside the project's own checkout)")
        return made_once_per_run(tmp_path_factory, f"tables-{name}", lambda _folder: tables_listings(root))

    return listings


@pytest.fixture(scope="session")
def screencast(tmp_path_factory: pytest.TempPathFactory):
    """The four-state narrated screencast of tests/helpers/videomedia.py, made once per test run
    (drawing, encoding and speech cost ~2 CPU-s)."""
    from tests.helpers.videomedia import make, require_media_tools

    require_media_tools(speech=True)
    return made_once_per_run(tmp_path_factory, "screencast", lambda folder: make(folder / "briefing.mp4"))


@pytest.fixture(scope="session")
def screencast_report(screencast, tmp_path_factory: pytest.TempPathFactory):
    """`analyze_path` over the screencast with OCR and ASR (uncached), made once per test run
    (~7 CPU-s, which each xdist worker paid before)."""
    from datasolver.video import analyze_path

    def analyze(out: Path):
        return analyze_path(screencast.path, out / "derived" / "video", image_root=out)

    return made_once_per_run(tmp_path_factory, "screencast-report", analyze)


@pytest.fixture(scope="session")
def fork_server():
    """One warm zygote per test session (per xdist worker), started from the main thread."""
    from datasolver.sandbox.fork_server import ForkServer
    from datasolver.solver import SOLVER_PRELOAD

    server = ForkServer(preload=SOLVER_PRELOAD).start()
    yield server
    server.close()


@pytest.fixture(scope="session", autouse=True)
def warm_runs_for_every_test(request: pytest.FixtureRequest):
    """Every test's sandboxed runs fork from the session's zygote (as a batch's do), which saves a
    fresh interpreter and the pandas/DuckDB imports (~0.6 CPU-s) per solver.py run.

    The sandbox guarantees are proven on both paths by `sandbox_path`; DATASOLVER_TEST_COLD_RUNS=1
    runs every other test cold, as before the fork server existed.
    """
    import os
    import sys

    from datasolver.sandbox.fork_server import use_fork_server

    if sys.platform != "linux" or os.environ.get("DATASOLVER_TEST_COLD_RUNS") == "1":
        yield None
        return
    server = request.getfixturevalue("fork_server")
    with use_fork_server(server if server.usable() else None):
        yield server


@pytest.fixture(params=["cold", "warm"])
def sandbox_path(request: pytest.FixtureRequest):
    """Run the test's sandboxed runs cold (a fresh interpreter each) and warm (forked from the zygote).

    The sandbox and hostile tests use it, so every guarantee is checked on both paths.
    """
    import sys

    from datasolver.sandbox.fork_server import use_fork_server

    if request.param == "cold":
        with use_fork_server(None):
            yield "cold"
        return
    if sys.platform != "linux":
        pytest.skip("the fork server is Linux only")
    server = request.getfixturevalue("fork_server")
    assert server.usable(), server.failure
    before = server.runs_started
    with use_fork_server(server):
        yield "warm"
    assert server.usable(), f"the zygote was lost during the test: {server.failure}"
    request.node.user_properties.append(("warm_runs", server.runs_started - before))
