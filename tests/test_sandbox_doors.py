"""The doors issue 23 found in the sandbox, each tried again and closed: SysV IPC and kernel
keyrings of other processes, parent-side reads through planted links and FIFOs, folder links in the
read allow-list, runs past the task deadline, unbounded inodes, and the parent's DuckDB reader.
Each runs cold and warm (forked from the fork server's zygote) where the sandbox is involved."""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import pytest

from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.sandbox.run import kernel_features, landlock_abi
from datasolver.data import ScratchLayout

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
    from datasolver.solver import rerun_solver
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import make_tiny_task

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
    run, _ = rerun_solver(ScratchLayout.of(root), tmp_path / "out")
    assert run.status == "OK", run.error or run.sandbox.stderr
    assert "GOT ['PermissionError', 'PermissionError', 'PermissionError']" in run.sandbox.stdout, run.sandbox.stdout
    assert any("zz left out of the read allow-list" in n and "a folder" in n for n in run.notes), run.notes
    assert any("root left out of the read allow-list" in n for n in run.notes), run.notes


# ---- door 2: every parent-side read of what the sandbox wrote goes through the safe-file helpers ----

ENV_SECRET = "sk-door-two-ENVIRON-SECRET"


def planting_code(kind: str) -> str:
    """Query-area code: the answer is right, and at exit solver.py, its pristine copy and the query
    log become a link to the parent's /proc/self/environ (or a FIFO), for the parent to read."""
    make = "_os.symlink('/proc/self/environ', _p)" if kind == "link" else "_os.mkfifo(_p)"
    return ("import atexit as _atexit, os as _os\n"
            "def _plant():\n"
            "    for _p in (TASK_DIR / 'workdir' / 'solver.py', TASK_DIR / 'workdir' / '.solver.pristine.py',\n"
            "               TASK_DIR / 'tmp' / 'run_sql.jsonl'):\n"
            "        try:\n            _os.unlink(_p)\n        except OSError:\n            pass\n"
            f"        {make}\n"
            "_atexit.register(_plant)\n")


def finishes(work, seconds: float = 180.0):
    """`work()`'s value, run in a thread: a parent that blocks on a FIFO fails the test, not the session."""
    import threading

    box: dict = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the parent blocked (a FIFO was opened, or a run outlived its timeout)"
    return box.get("value")


@pytest.mark.parametrize("kind", ["link", "fifo"])
@pytest.mark.usefixtures("sandbox_path")
def test_planted_links_and_fifos_leak_nothing_and_hang_nothing_in_tool_and_solve(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from datasolver.cli import cli
    from datasolver.solver import SolverToolbox
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import make_tiny_task, set_query

    monkeypatch.setenv("DATASOLVER_DOOR_TOKEN", ENV_SECRET)
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, planting_code(kind) + "result = run_sql('SELECT 1 AS one')")
        result = finishes(lambda: box.call("run_solver", {}))
        assert result.text.splitlines()[0] == "OK", result.text
        assert ENV_SECRET not in result.text
        for tool in ("read_solver", "edit_solver"):  # the tools refuse the planted file, they do not follow it
            args = {} if tool == "read_solver" else {"start_line": 1, "start_hash": "AA", "new_content": "x"}
            assert ENV_SECRET not in finishes(lambda: box.call(tool, args)).text
    solved = finishes(lambda: CliRunner().invoke(cli, ["solve", str(root), "--output", str(tmp_path / "out")]))
    assert ENV_SECRET not in solved.output


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_planted_links_and_fifos_leak_nothing_and_hang_nothing_in_a_batch(
        tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    from datasolver import examples
    from datasolver.examples import solver_handler
    from datasolver.llm.fake import ScriptedModel
    from datasolver.pipeline import run_batch_sync
    from datasolver.report import write_report
    from tests.helpers.pipeline import copy_examples, make_config

    monkeypatch.setenv("DATASOLVER_DOOR_TOKEN", ENV_SECRET)
    answers = examples.demo_answers()
    sales = answers["task_demo_sales"]
    # The planting code runs with the right answer; "never-named" is a check that never fires, so
    # the scripted model runs it once and answers.
    answers["task_demo_sales"] = dataclasses.replace(
        sales, mistake="never-named", mistaken_code=planting_code(kind) + sales.query_code())
    with ScriptedModel(handler=solver_handler(answers)) as server:
        config = make_config(server, copy_examples(tmp_path), tmp_path, task_ids=("task_demo_sales",))
        summary = finishes(lambda: run_batch_sync(config))
    (record,) = summary.tasks
    assert record.status == "solved", record.reason
    trace = (tmp_path / "logs" / "task_demo_sales" / "trace.jsonl").read_text(encoding="utf-8")
    assert ENV_SECRET not in trace
    final = [json.loads(line) for line in trace.splitlines() if '"solver_final"' in line]
    assert final and final[0]["code"] == "" and "not read" in final[0]["note"], final
    report = write_report(tmp_path / "logs").read_text(encoding="utf-8")
    assert ENV_SECRET not in report


# ---- door 4: bounded runs and queries ----

@pytest.mark.usefixtures("sandbox_path")
def test_a_run_solver_call_never_outlives_the_tasks_deadline(tmp_path: Path) -> None:
    # run_solver asks for 120 s (the loop's tool timeout too); the task has 1.5 s left: the sandbox
    # kills the run at 1.5 s, and the call waits no longer than that plus the tool's grace.
    import asyncio

    from datasolver.llm import ToolCall
    from datasolver.solver import SolverToolbox
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import make_tiny_task, set_query
    from datasolver.toolkit import ToolRunner

    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, "import time\ntime.sleep(3600)")
        runner = ToolRunner(box, timeout_s=120, seconds_left=lambda: 1.5)
        outcome = finishes(lambda: asyncio.run(runner.run(ToolCall("c1", "run_solver", '{"timeout": 120}'))))
    assert outcome.text.splitlines()[0] == "FAILED", outcome.text
    assert "timed out after 1.5 s" in outcome.text, outcome.text
    assert ToolRunner(box, timeout_s=120, seconds_left=lambda: -3.0).call_timeout() == 0.0
    assert ToolRunner(box, timeout_s=120, seconds_left=lambda: None).call_timeout() == 120


@pytest.mark.usefixtures("sandbox_path")
def test_making_files_without_end_is_stopped_by_the_inode_bound(tmp_path: Path) -> None:
    # Empty files and links take no disk space: only their count stops them.
    code = ("import os\ni = 0\nwhile True:\n"
            "    open(f'f{i}', 'w').close(); os.symlink('/nowhere', f'l{i}'); i += 1\n")
    run = sandboxed(tmp_path, code, max_files=2_000)
    assert run.killed_for is not None and "files, folders and links, over its limit of 2,000" in run.killed_for
    assert any(note.startswith("killed: the run made") for note in run.notes)


def test_the_parents_duckdb_has_a_memory_and_temp_share_and_refuses_huge_cells(tmp_path: Path) -> None:
    from datasolver.data import Catalog
    from datasolver.data.errors import CellTooLarge
    from datasolver.data.relation import MAX_CELL_BYTES
    from datasolver.solver import SolverToolbox
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import make_tiny_task

    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with Catalog.open(root) as catalog:
        ((memory, temp),) = catalog.own_rows(
            "SELECT current_setting('memory_limit'), current_setting('max_temp_directory_size')")
        assert memory.endswith("GiB") and float(memory.split()[0]) <= 4.0, memory  # not 80% of RAM
        assert temp.endswith("GiB") and float(temp.split()[0]) <= 16.0, temp  # not 90% of the disk
        with pytest.raises(CellTooLarge, match="column 's' has a cell of 2.0 MB, over the 1.0 MB"):
            catalog.query(f"SELECT 1 AS n, repeat('x', {2 * MAX_CELL_BYTES}) AS s", limit=5)
        with pytest.raises(CellTooLarge, match="200,000 items"):
            catalog.query("SELECT range(0, 200000) AS l", limit=5)
        fine = catalog.query(f"SELECT 1 AS n, repeat('x', {MAX_CELL_BYTES}) AS s, [1, 2] AS l", limit=5)
        assert fine.rows == [(1, "x" * MAX_CELL_BYTES, [1, 2])] and fine.columns == ["n", "s", "l"]
        twice = catalog.query("SELECT 'a' AS x, 'b' AS x", limit=5)  # a name held twice keeps both
        assert twice.rows == [("a", "b")] and twice.columns == ["x", "x"]
    with SolverToolbox(ScratchLayout.of(root)) as box:
        result = box.call("explore_data", {"query": f"SELECT repeat('x', {4 * MAX_CELL_BYTES}) AS s"})
    assert result.kind == "failed" and "over the 1.0 MB a result cell may have" in result.text, result.text
