"""The MCP server: an MCP client lists and calls the tools in-process, over stdio and over HTTP."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from datasolver.mcp_server import build_server
from datasolver.solver.hashline import line_hash
from datasolver.solver.scaffold import RESULT_LINE
from tests.helpers.solver import make_tiny_task
from tests.helpers.mcp import free_port, terminate, texts, wait_listening

ENGINE_TOOLS = ["list_tables", "describe_table", "query", "filter", "group", "sort", "join", "join_keys", "render"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "sales.csv").write_text("region,amount\nNorth,10\nSouth,9\nEast,9\nWest,1\n", encoding="utf-8")
    return folder


def folder_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


async def exercise_engine(client: Client) -> None:
    """List the tools, then query → group (ties) → render, all through the MCP client."""
    listed = await client.list_tools()
    names = [t.name for t in listed.tools]
    assert names == ENGINE_TOOLS
    assert all(t.annotations.read_only_hint for t in listed.tools)
    assert "@N" in next(t for t in listed.tools if t.name == "query").description
    tables = await client.call_tool("list_tables", {})
    assert texts(tables).startswith("- sales (")
    first = await client.call_tool("query", {"sql": "SELECT * FROM sales WHERE amount > 1"})
    assert not first.is_error and texts(first).splitlines()[:2] == ["result @1  (query)", "rows: 3"]
    top = await client.call_tool("group", {"source": "@1", "by": ["region"], "top": 2,
                                           "aggregations": [{"func": "sum", "column": "amount", "name": "total"}]})
    assert not top.is_error and "rows: 3" in texts(top)  # North, then South and East tied
    shown = await client.call_tool("render", {"source": "@latest"})
    assert texts(shown).splitlines()[:3] == ["result @2: showing 3 of 3 rows", "region\ttotal", "North\t10"]


def test_in_process_client_lists_and_calls_the_tools(data: Path) -> None:
    with build_server(data) as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                await exercise_engine(client)
                bad = await client.call_tool("query", {"sql": "SELECT * FROM @9"})
                assert bad.is_error
                assert json.loads(texts(bad)) == {
                    "ok": False, "error": "retry",
                    "message": "UnknownResult: no stored result @9. Stored results: @1, @2 (or @latest)."}
                write = await client.call_tool("query", {"sql": "DELETE FROM sales"})
                assert write.is_error and json.loads(texts(write))["error"] == "failed"
                assert "ReadOnlyViolation" in json.loads(texts(write))["message"]

        asyncio.run(main())
    assert (data / "sales.csv").read_text(encoding="utf-8").count("\n") == 5


@pytest.mark.slow
def test_stdio_client_lists_and_calls_the_tools(data: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "datasolver", "mcp", str(data)])

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await exercise_engine(client)

    asyncio.run(main())


@pytest.mark.slow
def test_streamable_http_client_lists_and_calls_the_tools(data: Path) -> None:
    port = free_port()
    # The server's stderr goes to a file: reading it on failure never waits for the server to
    # end (a pipe's read() would block while a slow server still starts), and a chatty server
    # never blocks on a full pipe.
    errors = data.parent / "mcp-server.stderr"
    with errors.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "datasolver", "mcp", str(data), "--http", str(port)],
                                   stdout=subprocess.DEVNULL, stderr=sink)
    try:
        # 90 s: a cold start on a loaded machine; the test waits no longer than needed.
        wait_listening(process, port, within_s=90, errors=lambda: errors.read_text(errors="replace"))

        async def main() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                await exercise_engine(client)

        asyncio.run(main())
    finally:
        terminate(process)


def test_task_folder_is_read_only_by_default(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    before = folder_digest(task)
    with build_server(task, scratch_root=tmp_path / "scratch") as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                # The task has a knowledge.md, so the engine tools include `lint`.
                engine = ENGINE_TOOLS[:7] + ["lint"] + ENGINE_TOOLS[7:]
                assert names == engine + ["explore_data", "read_solver"]
                solver = await client.call_tool("read_solver", {})
                assert RESULT_LINE in texts(solver)
                explored = await client.call_tool("explore_data", {"query": "SELECT count(*) AS n FROM orders"})
                assert texts(explored).splitlines()[:3] == ["rows: 1 of 1", "n", "4"]
                refused = await client.call_tool("edit_solver", {"start_line": 1, "start_hash": "AA", "new_content": ""})
                assert refused.is_error

        asyncio.run(main())
    assert folder_digest(task) == before


def test_task_folder_with_allow_write_edits_and_runs_solver_in_scratch(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    before = folder_digest(task)
    with build_server(task, allow_write=True, scratch_root=tmp_path / "scratch") as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names[-4:] == ["explore_data", "read_solver", "edit_solver", "run_solver"]
                listing = texts(await client.call_tool("read_solver", {}))
                number = next(int(row.split(":")[0]) for row in listing.splitlines() if row.endswith("|" + RESULT_LINE))
                code = 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city")'
                edited = await client.call_tool("edit_solver", {"start_line": number, "start_hash": line_hash(RESULT_LINE),
                                                                "new_content": code})
                assert not edited.is_error, texts(edited)
                ran = await client.call_tool("run_solver", {"show_rows": 0})
                assert texts(ran).startswith("OK"), texts(ran)

        asyncio.run(main())
        assert (server.scratch / "workdir" / "prediction.csv").is_file()
    assert folder_digest(task) == before


def test_a_misspelt_argument_is_named_and_list_tables_says_not_read_once(data: Path) -> None:
    """Issue 45: `{"sq": …}` got "sql: Field required" without naming `sq`; and a file not read was
    listed as `not read: x.csv: not read: it is a link …`."""
    outside = data.parent / "outside.csv"
    outside.write_text("a\n1\n", encoding="utf-8")
    (data / "linked.csv").symlink_to(outside)
    with build_server(data) as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                bad = await client.call_tool("query", {"sq": "SELECT 1"})
                assert bad.is_error and json.loads(texts(bad)) == {
                    "ok": False, "error": "retry",
                    "message": "invalid arguments for query: unknown argument 'sq' (did you mean 'sql'?); "
                               "query takes: sql"}
                listed = texts(await client.call_tool("list_tables", {}))
                unread = [line for line in listed.splitlines() if "linked.csv" in line]
                assert len(unread) == 1 and unread[0].startswith("not read: linked.csv: it is a link")
                assert unread[0].count("not read") == 1

        asyncio.run(main())
