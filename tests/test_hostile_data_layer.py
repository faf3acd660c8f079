"""Hostile inputs, fifth round (issue 43): what the data layer's encoding detection, question linking,
value index, table cache, Parquet loader and DuckDB's own listings let a small file or a long text do.
Each door is tried through the command a person runs; each test fails on the code before the fix.

Before (a loaded 2-core machine): a 48 KiB CSV with one non-UTF-8 byte in its header and one long
ASCII line held `tables` 19-42 s and `run --task-timeout 15` 52-73 s with no model request (the
evidence scan was quadratic in the line and held the GIL: Ctrl-C and deadlines waited); an
80,000-character question took `run` to 1.5 GB and `\\link` of 60,000 CJK characters grew the MCP
server by ~1 GB (a sorted list of ~80 candidate spans per character); one 24 MB CSV's value index took
33-41 s against its 8 s budget and 1.26 GB; a 6 KB Parquet file became a 629 MB table-cache entry
(1.8 GB to load) and the cache had no size cap; `duckdb_databases()` and `duckdb_settings()` showed
the table cache's folder under the home folder and the catalog's temporary folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from datasolver.cli import cli
from datasolver.data import Catalog
from datasolver.data.errors import QueryInterrupted
from datasolver.data.input_files import FOLLOW_OUTSIDE_ENV
from datasolver.data.linking import MAX_LINKED_CHARS, ValueIndex, link_question
from datasolver.data.table_cache import MAX_ENV as CACHE_MAX_ENV
from datasolver.data.tasks import MAX_QUESTION_CHARS, load_task
from datasolver.llm.fake import ScriptedServer, text
from datasolver.mcp_server import build_server

from tests.helpers.datafiles import sqlite_file, write_task
from tests.helpers.hostile_files import (
    command_measured,
    cjk_text,
    expanding_parquet,
    folder_bytes,
    one_byte_off_utf8_csv,
    run_measured,
)
from tests.helpers.mcp import free_port, terminate, texts, wait_listening

MiB = 1 << 20
# The limit the issue set for `run` on the long question and on the wide CSV (under 400 MB).
RUN_PEAK_LIMIT_KIB = 390 * 1024
# One line of 1 MiB: the quadratic scan took 20-40 s on 48 KiB, so hours on this; the fixed scan well
# under a second. The command is killed at KILL_S: a hang is a failed test, not a stuck suite.
LONG_LINE_BYTES = 1 * MiB
KILL_S = 90


@pytest.fixture(autouse=True)
def _no_outside_links_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FOLLOW_OUTSIDE_ENV, raising=False)


def _scripted_run(input_dir: Path, tmp_path: Path, *extra: str, timeout_s: float = 300):
    """`datasolver run INPUT` against a scripted model that answers in prose: (measured run, request bodies)."""
    with ScriptedServer(handler=lambda body: text("I cannot answer.")) as server:
        run = command_measured([sys.executable, "-m", "datasolver", "run", str(input_dir), str(tmp_path / "out"),
                                "--logs", str(tmp_path / "logs"), "--api-url", server.base_url, "--model", "fake-model",
                                "--max-attempts", "1", "--no-doc-llm", *extra], timeout_s=timeout_s)
        bodies = [json.dumps(r.body, ensure_ascii=False) for r in server.records]
    return run, bodies


# ----------------------------------------------------------------------------- encoding evidence: linear

def test_a_header_byte_off_utf8_and_a_long_ascii_line_list_at_once(tmp_path: Path) -> None:
    """`tables` reads the head at registration and the whole file at load: both scans are linear."""
    task = write_task(tmp_path, files={"csv/t.csv": one_byte_off_utf8_csv(LONG_LINE_BYTES)})
    run = run_measured(["tables", str(task), "--table-cache", "off"], timeout_s=KILL_S)
    assert run.returncode == 0, run.output
    assert "t  rows        1  cols   2  csv/t.csv" in run.output
    assert "decoded as Windows-1252" in run.output and "'naéme'" in run.output


@pytest.mark.slow
def test_run_on_that_csv_reaches_the_model_within_its_deadline(tmp_path: Path) -> None:
    """Before, `run --task-timeout 15` on the 48 KiB file ended after 52-73 s with no model request
    ("deadline passed before attempt 1"); on 1 MiB it would not end for hours."""
    write_task(tmp_path / "in", files={"csv/t.csv": one_byte_off_utf8_csv(LONG_LINE_BYTES)})
    run, bodies = _scripted_run(tmp_path / "in", tmp_path, "--task-timeout", "15", timeout_s=KILL_S)
    assert run.returncode in (0, 3), run.output
    assert bodies, run.output  # the model was asked: the deadline had not passed before attempt 1
    traces = (tmp_path / "logs" / "task_1" / "trace.jsonl").read_text(encoding="utf-8")
    assert "deadline passed before attempt 1" not in traces


# ----------------------------------------------------------------------------- question linking: bounded

def test_link_keeps_to_its_text_cap_in_bounded_memory(tmp_path: Path) -> None:
    """80,000 CJK characters: before, a sorted list of ~6.4 million candidate spans (1.5 GB). Now the
    first MAX_LINKED_CHARS are linked, spans made one at a time, and a note says so."""
    import tracemalloc

    task = write_task(tmp_path, files={"csv/t.csv": "城市,人口\n北京市,2189\n上海市,2487\n"})
    question = cjk_text(80_000) + "北京市"
    with Catalog.open(task, table_cache=None) as catalog:
        index = catalog.value_index()
        tracemalloc.start()
        try:
            links = link_question(catalog, question, index)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 32 * MiB, f"peak {peak / MiB:.0f} MiB"
        assert links.cut == f"only the first {MAX_LINKED_CHARS:,} of the text's 80,003 characters were linked"
        assert len(links.question) == MAX_LINKED_CHARS
        short = link_question(catalog, "北京市的人口是多少?", index)
        assert short.cut == "" and [v.value for v in short.values] == ["北京市"]


@pytest.mark.slow
def test_an_80000_character_question_keeps_run_small_and_reaches_the_model_cut(tmp_path: Path) -> None:
    """A 240 KB task.json (under its 1 MiB cap): before, `run` peaked at 1.5 GB. The question is now
    kept up to MAX_QUESTION_CHARS, with a line saying so, in the prompt as knowledge.md is."""
    question = cjk_text(80_000)
    task = write_task(tmp_path / "in", question=question, files={"csv/t.csv": "城市,人口\n北京市,2189\n"})
    assert (task / "task.json").stat().st_size > 200_000
    assert len(load_task(task).question) < MAX_QUESTION_CHARS + 200
    run, bodies = _scripted_run(tmp_path / "in", tmp_path, "--task-timeout", "120")
    assert run.returncode in (0, 3), run.output
    assert run.peak_kib < RUN_PEAK_LIMIT_KIB, f"peak {run.peak_kib >> 10} MiB"
    assert bodies and max(len(b) for b in bodies) < 200_000
    cut_line = f"(the question goes on: these are its first {MAX_QUESTION_CHARS:,} of 80,000 characters"
    assert cut_line in bodies[-1]
    assert question[:MAX_QUESTION_CHARS] in bodies[-1] and question[MAX_QUESTION_CHARS:][:50] not in bodies[-1]


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc peak-memory reset")
def test_link_of_60000_cjk_characters_over_mcp_grows_the_server_little(tmp_path: Path) -> None:
    """Before, one explore_data `\\link` call of 180 KB grew `mcp --http` by ~1 GB."""
    from tests.helpers.solver import make_tiny_task

    task = make_tiny_task(tmp_path / "input")
    port = free_port()
    errors = tmp_path / "mcp-server.stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "datasolver", "mcp", str(task), "--http", str(port),
                                    "--table-cache", str(tmp_path / "cache")],
                                   stdout=subprocess.DEVNULL, stderr=sink, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        wait_listening(process, port, within_s=90, errors=lambda: errors.read_text(errors="replace"))

        async def main() -> tuple[str, int, int]:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=600) as client:
                warm = await client.call_tool("explore_data", {"query": "\\link Paris"})  # builds the value index
                assert "Paris" in texts(warm)
                before = _kib(process.pid, "VmRSS")
                Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # the peak (VmHWM) starts again from now
                linked = await client.call_tool("explore_data", {"query": "\\link " + cjk_text(60_000)})
                return texts(linked), before, _kib(process.pid, "VmHWM")

        answer, before, peak = asyncio.run(main())
    finally:
        terminate(process)
    assert f"note: only the first {MAX_LINKED_CHARS:,} of the text's 60,000 characters were linked" in answer
    assert peak - before < 100 * 1024, f"grew {(peak - before) >> 10} MiB"


# ----------------------------------------------------------------------------- the value index: its budget inside a table

def _wide_csv(columns: int, rows: int, width: int) -> str:
    """`columns` text columns of `rows` distinct values of about `width` characters each."""
    import random

    # Random letters and spaces as bytes mapped onto the alphabet at once (one `rng.choices` call per
    # value took ~2 s for the 24 MB file); each value's own prefix keeps it distinct.
    alphabet = b"abcdefgh "
    letters = random.Random(43).randbytes(columns * rows * width).translate(
        bytes(alphabet[i % len(alphabet)] for i in range(256))).decode("ascii")
    header = ",".join(f"c{c}" for c in range(columns))
    lines = [",".join(f"v{r}x{c}" + letters[(r * columns + c) * width:(r * columns + c + 1) * width]
                      for c in range(columns))
             for r in range(rows)]
    return header + "\n" + "\n".join(lines) + "\n"


def test_the_value_index_stops_inside_a_table_at_its_budget(tmp_path: Path) -> None:
    """Before, the budget was looked at between tables only: one table of 60 text columns x 5,000
    values was indexed whole (33-41 s against 8 s). Now each column's query is stopped at the budget
    and the loop over values looks at the clock, so a tiny budget ends inside the first table."""
    task = write_task(tmp_path, files={"csv/wide.csv": _wide_csv(60, 5_000, 12)})
    with Catalog.open(task) as catalog:
        catalog.load()  # the load is not what this measures
        index = ValueIndex.build(catalog, budget_s=0.05)
    assert index.size < 60 * 5_000
    assert "time budget (0.05 s) spent in wide: its other values and the tables after it not indexed" in index.notes


def test_the_engines_own_sql_stops_at_its_timeout(tmp_path: Path) -> None:
    """The value index's column queries are interrupted like a user's query (`own_rows(timeout_s=…)`)."""
    task = write_task(tmp_path, files={"csv/t.csv": "n\n" + "\n".join(map(str, range(1000))) + "\n"})
    with Catalog.open(task) as catalog:
        catalog.load()
        with pytest.raises(QueryInterrupted, match=r"timed out after 0\.2 s"):
            catalog.own_rows("SELECT count(*) FROM t a, t b, t c, t d WHERE hash(a.n, b.n, c.n, d.n) % 1000 = 7",
                             timeout_s=0.2)
        assert catalog.own_rows("SELECT count(*) FROM t") == [(1000,)]  # the catalog stays usable


@pytest.mark.slow
def test_the_value_index_of_a_24_mb_csv_of_60_text_columns_stays_small(tmp_path: Path) -> None:
    """The issue's file (60 text columns x 5,000 distinct values, 24 MB): its value index took the
    process to 1.26 GB (every value's trigrams in Python sets). `\\link` through `datasolver tool`
    (the table's load, the index, the lookup) now stays under 400 MB."""
    task = write_task(tmp_path / "in", question="How many Alpha Beta?", files={"csv/wide.csv": _wide_csv(60, 5_000, 72)})
    assert (task / "context" / "csv" / "wide.csv").stat().st_size > 20 * MiB
    prepared = run_measured(["prepare", "--no-llm", str(task), str(tmp_path / "scratch")], timeout_s=KILL_S)
    assert prepared.returncode == 0, prepared.output
    with (task / "context" / "csv" / "wide.csv").open(encoding="utf-8") as lines:
        value = [next(lines), next(lines)][1].split(",")[0]
    run = run_measured(["tool", str(tmp_path / "scratch" / "task_1"), "explore_data",
                        json.dumps({"query": f"\\link how many rows hold {value}?"})], timeout_s=KILL_S)
    assert run.returncode == 0, run.output
    assert f"- table wide: column c0 has the value '{value}'" in run.output, run.output
    assert run.peak_kib < RUN_PEAK_LIMIT_KIB, f"peak {run.peak_kib >> 10} MiB"


# ----------------------------------------------------------------------------- Parquet and the table cache

def test_a_parquet_file_that_expands_is_refused_with_a_note(tmp_path: Path) -> None:
    """Before, `tables` made a 629 MB table-cache entry of this 6 KB file (1.8 GB to load)."""
    task = write_task(tmp_path, files={"csv/ok.csv": "id\n1\n", "big.parquet": expanding_parquet})
    assert (task / "context" / "big.parquet").stat().st_size < 64 * 1024
    cache = tmp_path / "cache"
    run = run_measured(["tables", str(task), "--table-cache", str(cache)], timeout_s=KILL_S)
    assert run.returncode == 0, run.output
    assert ("unreadable: big.parquet [big]: not loaded: its values would take 381.5 MB as a table, "
            in run.output), run.output
    assert "over the 64 times (or 64.0 MB in all) a table may take of what its file holds" in run.output
    assert folder_bytes(cache) < 10 * MiB
    query = run_measured(["sql", str(task), "SELECT count(*) FROM big", "--table-cache", str(cache)], timeout_s=KILL_S)
    assert query.returncode == 1, query.output
    assert "table 'big' could not be loaded: big.parquet was not read: its values would take" in query.output
    assert folder_bytes(cache) < 10 * MiB


def test_parquet_within_the_caps_loads_and_one_too_wide_is_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    def repetitive(path: Path) -> None:  # 200,000 rows of a few repeated words: compresses ~1000x, small as a table
        pq.write_table(pa.table({"region": ["North", "South", "East", "West"] * 50_000, "n": list(range(200_000))}),
                       path)

    def wide(path: Path) -> None:
        pq.write_table(pa.table({f"c{i}": [1] for i in range(5_000)}), path)

    task = write_task(tmp_path, files={"ok.parquet": repetitive, "wide.parquet": wide})
    with Catalog.open(task, table_cache=None) as catalog:
        assert catalog.query("SELECT count(*), count(DISTINCT region) FROM ok").rows == [(200_000, 4)]
        assert [(n.path, n.reason) for n in catalog.skipped] == [
            ("wide.parquet", "not loaded: its rows would need 5,000 columns, over the 4,096-column limit for a table")]


def _cached(run_output: str) -> bool:
    return "table(s) read from the table cache" in run_output


def test_the_table_cache_keeps_to_its_size_cap_removing_the_least_recently_used(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, the cache had no total cap: every table of every folder stayed until deleted by hand."""
    cache = tmp_path / "cache"
    folders = {name: write_task(tmp_path, name, files={"csv/t.csv": "id,v\n" + "".join(f"{i},{name}{i}\n"
                                                                                         for i in range(3000))})
               for name in ("a", "b", "c")}
    runner = CliRunner()

    def tables(name: str) -> str:
        result = runner.invoke(cli, ["tables", str(folders[name]), "--table-cache", str(cache)])
        assert result.exit_code == 0, result.output
        return result.output

    tables("a")
    entry = folder_bytes(cache)
    assert entry > 0
    monkeypatch.setenv(CACHE_MAX_ENV, str(int(entry * 2.5)))  # room for two tables, not three
    tables("b")
    time.sleep(0.05)  # file times order the uses
    assert _cached(tables("a"))  # a is now more recently used than b
    time.sleep(0.05)
    tables("c")  # over the cap: the least recently used (b) goes
    assert folder_bytes(cache) <= entry * 2.5
    assert _cached(tables("a")) and _cached(tables("c"))
    assert not _cached(tables("b"))


def test_a_table_another_process_removed_from_the_cache_is_loaded_again(tmp_path: Path) -> None:
    """The cap removes entries of other processes' catalogs too: an open catalog whose query connection
    reopens (to load another table) loads such a table again instead of failing to attach its file."""
    from datasolver.data import TableCache

    task = write_task(tmp_path, files={"csv/a.csv": "x\n1\n", "csv/b.csv": "y\n2\n"})
    with Catalog.open(task, table_cache=TableCache(tmp_path / "cache")) as catalog:
        assert catalog.query("SELECT x FROM a").rows == [(1,)]
        for table in (tmp_path / "cache").rglob("*.duckdb"):
            table.unlink()  # as another process's `make_room` does
        assert catalog.query("SELECT y FROM b").rows == [(2,)]  # the query connection reopens here
        assert catalog.query("SELECT x FROM a").rows == [(1,)]


def test_the_cap_is_in_the_help(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["tables", "--help"])
    assert "$DATASOLVER_TABLE_CACHE_MAX bytes in all" in " ".join(result.output.split())
    assert "least recently used tables are removed" in " ".join(result.output.split())


ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"


def test_tables_stops_loading_at_its_timeout(tmp_path: Path) -> None:
    """Before, `tables` had no timeout: only the SQLite reader's own 30 s cap ended an endless view."""
    task = write_task(tmp_path, files={"db.sqlite": sqlite_file({"t": ("x INTEGER", [(1,)])}, {"endless": ENDLESS})})
    run = run_measured(["tables", str(task), "--timeout", "2", "--table-cache", "off"], timeout_s=KILL_S)
    assert run.returncode == 0, run.output
    assert "note: loading stopped at the 2 s timeout" in run.output
    assert "endless" in run.output and "t  " in run.output


# ----------------------------------------------------------------------------- DuckDB's own listings

LISTINGS = [
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM duckdb_settings()",
    "SELECT name, value FROM duckdb_settings() WHERE value LIKE '%/%'",
    "SELECT current_setting('temp_directory')",
    "SELECT current_setting('secret_directory') AS s FROM t",
    "PRAGMA database_list",
    "SELECT * FROM pragma_database_size()",
    "SELECT * FROM duckdb_extensions()",
    "SELECT * FROM duckdb_temporary_files()",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM pg_catalog.pg_settings",
    "SELECT * FROM duckdb_schemas()",
    "SELECT v.sql FROM duckdb_views() v, t",
    "SELECT view_definition FROM information_schema.views v, t",
    "EXPLAIN ANALYZE SELECT * FROM t",
    "EXPLAIN SELECT * FROM t",
    "SHOW DATABASES",
]


def _machine_paths(*extra: Path) -> list[str]:
    return [str(Path.home()), tempfile.gettempdir() + os.sep, *(str(p) for p in extra)]


@pytest.mark.parametrize("cache_off", [False, True], ids=["table-cache", "no-cache"])
def test_no_query_result_names_a_path_of_the_machine(tmp_path: Path, cache_off: bool) -> None:
    """Before, `duckdb_databases()` and `duckdb_settings()` showed the table cache's folder (under the
    home folder: the user's name), the catalog's temporary folder and the secret folder; a view's SQL
    and EXPLAIN ANALYZE named the file a query read straight."""
    task = write_task(tmp_path / "data", files={"csv/t.csv": "id,name\n1,Ann\n2,Bo\n"})
    cache = tmp_path / "cache"
    runner = CliRunner()
    for sql in LISTINGS:
        result = runner.invoke(cli, ["sql", str(task), sql, "--table-cache", "off" if cache_off else str(cache)])
        said = result.output + (result.stderr if result.stderr_bytes is not None else "")
        for path in _machine_paths(tmp_path):
            assert path not in said, (sql, said[:2000])
        assert result.exit_code == 0 or "lists DuckDB's own settings, databases or files on this machine" in said, \
            (sql, said[:2000])


def test_the_listings_are_refused_with_a_clear_message_everywhere(tmp_path: Path) -> None:
    task = write_task(tmp_path, files={"csv/t.csv": "id\n1\n"})
    with Catalog.open(task) as catalog:
        for sql in ("SELECT * FROM duckdb_databases()", "PRAGMA database_list", "SELECT current_setting('threads')"):
            with pytest.raises(Exception, match="not the task's data, and is not available here"):
                catalog.query(sql)
        assert catalog.query("SELECT count(*) FROM t").rows == [(1,)]
        assert catalog.query("PRAGMA show_databases").rows  # names only: still answered
    with build_server(task) as server:
        async def main() -> str:
            async with Client(server.mcp) as client:
                return texts(await client.call_tool("query", {"sql": "SELECT * FROM duckdb_settings()"}))

        said = asyncio.run(main())
    assert "duckdb_settings() lists DuckDB's own settings" in said
    assert tempfile.gettempdir() + os.sep not in said and str(Path.home()) not in said
