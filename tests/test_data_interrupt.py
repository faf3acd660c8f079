"""Runaway queries: every exploration path stops them with a clear error and stays usable.

Before: exploration SQL had no timeout, and a query could only be stopped by reaching into the
catalog's connection (which does not exist while a table loads).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner
from mcp import Client

from datasolver.ask import AskToolbox, open_package
from datasolver.cli import cli
from datasolver.data import Catalog, ScratchLayout
from datasolver.data.errors import QueryInterrupted
from datasolver.mcp_server import build_server
from datasolver.sandbox import SandboxLimits
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.datafiles import sqlite_file, write_task
from tests.helpers.mcp import texts

# 10^12 row combinations, each hashed: never finishes on its own (and no statistic can prove the
# filter false, which would let DuckDB skip the work).
RUNAWAY = "SELECT count(*) FROM t a, t b, t c, t d WHERE hash(a.n, b.n, c.n, d.n) % 1000 = 7"


@pytest.fixture
def task(tmp_path):
    return write_task(tmp_path, files={"csv/t.csv": "n\n" + "\n".join(map(str, range(1000))) + "\n"})


def _in_thread(fn):
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


def test_a_timeout_stops_a_runaway_query_and_the_catalog_stays_usable(task):
    with Catalog.open(task) as cat:
        cat.load()  # the table's load is not the query's: on a busy machine it alone can pass 0.2 s
        with pytest.raises(QueryInterrupted, match=r"timed out after 0\.2 s .*Make it cheaper"):
            cat.query(RUNAWAY, timeout_s=0.2)
        assert cat.query("SELECT count(*) FROM t").rows == [(1000,)]


def test_the_catalog_default_timeout_covers_a_whole_result_and_describe(task):
    with Catalog.open(task, timeout_s=0.2) as cat:
        with pytest.raises(QueryInterrupted, match="timed out"):
            cat.sql(RUNAWAY).df()
        assert "n" in cat.describe("t", timeout_s=60)  # a per-call value overrides the default


def test_interrupt_from_another_thread_stops_a_running_query(task):
    with Catalog.open(task) as cat:
        cat.load()
        thread, box = _in_thread(lambda: cat.query(RUNAWAY))
        while not cat.interrupt() and thread.is_alive():  # True once an operation is running
            thread.join(0.01)
        thread.join(30)
        assert not thread.is_alive()
        assert isinstance(box.get("error"), QueryInterrupted), box
        assert "interrupted" in str(box["error"])
        assert cat.query("SELECT max(n) FROM t").rows == [(999,)]


def test_interrupt_while_a_table_is_loading(task):
    with Catalog.open(task) as cat:
        # The read of t blocks until released, standing in for a slow file read.
        source = cat._entries["t"].source
        real_load, reading, release = source.load, threading.Event(), threading.Event()

        def slow_load(ctx):
            reading.set()
            release.wait(30)
            return real_load(ctx)

        source.load = slow_load
        thread, box = _in_thread(lambda: cat.query("SELECT count(*) FROM t"))
        assert reading.wait(30)
        assert cat.interrupt() is True  # must not wait for the loading thread's lock
        release.set()
        thread.join(30)
        assert isinstance(box.get("error"), QueryInterrupted), box
        source.load = real_load
        assert cat.skipped == []  # stopped, not broken: the table loads on the next query
        assert cat.query("SELECT count(*) FROM t").rows == [(1000,)]


def test_interrupt_with_nothing_running_changes_nothing(task):
    with Catalog.open(task) as cat:
        assert cat.interrupt() is False
        assert cat.query("SELECT count(*) FROM t").rows == [(1000,)]


def test_sql_command_timeout(task):
    result = CliRunner().invoke(cli, ["sql", "--timeout", "0.2", str(task), RUNAWAY])
    assert result.exit_code == 1
    assert "timed out after 0.2 s" in result.output


def test_a_timeout_whose_stopper_starts_late_still_closes_the_catalog(task, monkeypatch):
    # The timer's thread descheduled between listing its stopper and starting it (a busy machine):
    # the interrupted query ended and close() joined a thread not yet started (RuntimeError).
    start = threading.Thread.start

    def late_start(thread: threading.Thread) -> None:
        if "_keep_stopping" in thread.name:
            time.sleep(0.5)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", late_start)
    result = CliRunner().invoke(cli, ["sql", "--timeout", "0.2", str(task), RUNAWAY])
    assert result.exit_code == 1, repr(result.exception)
    assert "timed out after 0.2 s" in result.output


def test_explore_data_stops_at_its_timeout(task, tmp_path):
    scratch = prepare_task(task, tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(scratch), limits=SandboxLimits(timeout_s=0.2)) as toolbox:
        result = toolbox.call("explore_data", {"query": RUNAWAY})
        assert not result.ok and "QueryInterrupted" in result.text and "timed out" in result.text


def test_ask_query_tool_stops_at_the_catalog_timeout(task):
    with open_package(task) as package:
        package.catalog.timeout_s = 0.2
        result = AskToolbox(package).call("query", {"sql": RUNAWAY})
        assert not result.ok and "timed out" in result.text


# A SQLite view whose rows SQLite computes one by one: a tiny file whose load takes seconds.
SLOW_VIEW = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) "
             "SELECT x, x % 7 AS k FROM c")


def _slow_folder(tmp_path, rows: int):
    folder = tmp_path / "data"
    folder.mkdir()
    sqlite_file({"small": ("a INTEGER", [(1,)])}, views={"slow": SLOW_VIEW.format(rows=rows)})(folder / "slow.db")
    return folder


def _ctrl_c_as_a_terminal_sends_it() -> None:
    """The child starts with SIGINT's default disposition, as a command typed at a terminal does. A suite
    run as a background job (`pytest … &` from a script, nohup) has SIGINT ignored, the child inherits
    that, Python then installs no KeyboardInterrupt, and Ctrl-C is (rightly) ignored: exit 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_ends_a_load_at_once(tmp_path, signum, code):
    # Before: the signal waited for the whole load, then a catalog error ended the command (exit 1).
    folder = _slow_folder(tmp_path, 5_000_000)
    cache, temp = tmp_path / "cache", tmp_path / "temp"
    temp.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "datasolver", "sql", "--table-cache", str(cache), "--timeout", "0", str(folder),
         "SELECT count(*) FROM slow"],
        env=dict(os.environ, TMPDIR=str(temp)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ctrl_c_as_a_terminal_sends_it)
    try:
        while not list(cache.glob("*/.tmp-*")) and process.poll() is None:  # the load has begun
            time.sleep(0.01)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == code, err[-2000:]
    assert err.strip().endswith("interrupted") and "Traceback" not in err and out == ""
    assert list(cache.glob("*/.tmp-*")) == [] and list(temp.iterdir()) == []  # nothing half-written left


def test_over_mcp_a_load_never_counts_against_a_query_timeout(tmp_path):
    # Before: the first query loaded the table within its own time limit and timed out, every time.
    # 1M SQLite rows take seconds to read (each passes through Python: ~2 s here, 4x the limit);
    # counting them once loaded, ms.
    folder = tmp_path / "data"
    folder.mkdir()
    with sqlite3.connect(folder / "big.db") as db:
        db.execute("CREATE TABLE big AS " + SLOW_VIEW.format(rows=1_000_000))
    with build_server(folder, query_timeout_s=0.5) as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                counted = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM big"})
                assert not counted.is_error, texts(counted)
                assert "1000000" in texts(counted)

        asyncio.run(main())


def test_a_timeout_during_a_load_says_the_load_took_the_time(tmp_path):
    folder = _slow_folder(tmp_path, 3_000_000)
    with Catalog.open(folder) as cat:
        with pytest.raises(QueryInterrupted, match=r"timed out after 0\.2 s while loading slow \(slow\.db, .*\) and "
                                                   r"was stopped: reading the table took the time, not the query"):
            cat.query("SELECT count(*) FROM slow", timeout_s=0.2)
