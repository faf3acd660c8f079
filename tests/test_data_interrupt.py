"""Runaway queries: every exploration path stops them with a clear error and stays usable.

Before: exploration SQL had no timeout, and a query could only be stopped by reaching into the
catalog's connection (which does not exist while a table loads).
"""

from __future__ import annotations

import threading

import pytest
from click.testing import CliRunner

from datasolver.ask import AskToolbox, open_package
from datasolver.cli import cli
from datasolver.data import Catalog, QueryInterrupted
from datasolver.sandbox import SandboxLimits
from datasolver.solver import SolverToolbox, prepare_task
from tests.helpers.datafiles import write_task

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
        with pytest.raises(QueryInterrupted, match=r"timed out after 0\.2 s .*Make it cheaper"):
            cat.query(RUNAWAY, timeout_s=0.2)
        assert cat.query("SELECT count(*) FROM t").rows == [(1000,)]


def test_the_catalog_default_timeout_covers_query_df_and_describe(task):
    with Catalog.open(task, timeout_s=0.2) as cat:
        with pytest.raises(QueryInterrupted, match="timed out"):
            cat.query_df(RUNAWAY)
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
        real_read, reading, release = source.read, threading.Event(), threading.Event()

        def slow_read(scratch, stop):
            reading.set()
            release.wait(30)
            return real_read(scratch, stop)

        source.read = slow_read
        thread, box = _in_thread(lambda: cat.query("SELECT count(*) FROM t"))
        assert reading.wait(30)
        assert cat.interrupt() is True  # must not wait for the loading thread's lock
        release.set()
        thread.join(30)
        assert isinstance(box.get("error"), QueryInterrupted), box
        source.read = real_read
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


def test_explore_data_stops_at_its_timeout(task, tmp_path):
    scratch = prepare_task(task, tmp_path / "scratch")
    with SolverToolbox(scratch, limits=SandboxLimits(timeout_s=0.2)) as toolbox:
        result = toolbox.call("explore_data", {"query": RUNAWAY})
        assert not result.ok and "QueryInterrupted" in result.text and "timed out" in result.text


def test_ask_query_tool_stops_at_the_catalog_timeout(task):
    with open_package(task) as package:
        package.catalog.timeout_s = 0.2
        result = AskToolbox(package).call("query", {"sql": RUNAWAY})
        assert not result.ok and "timed out" in result.text
