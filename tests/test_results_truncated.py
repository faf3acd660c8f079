"""A capped result says it was cut, with the true count (issue 32, item 5): explore_data, the MCP
server's `query` and `render` (the analyst's result handles), and `sql --limit`; and no tool lets the
model raise a cap beyond the configured one. Users of database MCP servers report capped results that
look complete as silently wrong answers (bytebase/dbhub#404, Teradata MCP #249/#307, tiger-cli#167)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp import Client

from datasolver.data import ScratchLayout
from datasolver.ask import AskToolbox, open_package
from datasolver.ask.config import AskLimits
from datasolver.cli import cli
from datasolver.mcp_server import build_server
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import make_tiny_task
from datasolver.solver.tools.explore_data import MAX_LIMIT
from tests.helpers.mcp import texts


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "n.csv").write_text("n\n" + "\n".join(map(str, range(40))) + "\n", encoding="utf-8")
    return folder


def test_explore_data_says_truncated_and_keeps_its_cap(tmp_path: Path) -> None:
    root = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(root)) as box:
        cut = box.call("explore_data", {"query": "SELECT * FROM range(3)", "limit": 2})
        whole = box.call("explore_data", {"query": "SELECT * FROM range(3)", "limit": 3})
        asked_more = box.call("explore_data", {"query": "SELECT * FROM range(100000)", "limit": 10 ** 9})
    assert cut.text.splitlines()[0] == "rows: 2 of 3 (truncated)"
    assert whole.text.splitlines()[0] == "rows: 3 of 3"
    assert asked_more.text.splitlines()[0] == f"rows: {MAX_LIMIT} of 100000 (truncated)"
    assert f"note: limit capped at {MAX_LIMIT}." in asked_more.text


def test_mcp_query_and_render_say_truncated_and_keep_their_cap(data: Path) -> None:
    with build_server(data) as server:
        async def main() -> tuple[str, str, str]:
            async with Client(server.mcp) as client:
                stored = await client.call_tool("query", {"sql": "SELECT n FROM n ORDER BY n"})
                shown = await client.call_tool("render", {"source": "@1", "max_rows": 10 ** 6})
                few = await client.call_tool("query", {"sql": "SELECT n FROM n WHERE n < 2"})
                return texts(stored), texts(shown), texts(few)

        stored, shown, few = asyncio.run(main())
    assert "rows: 40" in stored.splitlines()
    assert "first 3 of 40 rows (truncated: a sample, not the data; render @1 to read them):" in stored.splitlines()
    render_rows = AskLimits().render_rows
    assert shown.splitlines()[0] == f"result @1: showing {render_rows} of 40 rows (truncated)"
    assert len([line for line in shown.splitlines() if line.isdigit()]) == render_rows  # the server's cap
    assert "all 2 rows:" in few.splitlines()  # a whole result says nothing of the kind


def test_the_analysts_handles_say_truncated(data: Path) -> None:
    package = open_package(data)
    try:
        box = AskToolbox(package, AskLimits(render_rows=4))
        box.call("query", {"sql": "SELECT n FROM n"})
        shown = box.call("render", {"source": "@latest", "max_rows": 100})
    finally:
        package.close()
    assert shown.text.splitlines()[0] == "result @1: showing 4 of 40 rows (truncated)"


def test_sql_limit_says_truncated_with_the_true_count(data: Path) -> None:
    cut = CliRunner().invoke(cli, ["sql", str(data), "SELECT n FROM n", "--limit", "5"])
    assert cut.exit_code == 0, cut.output
    assert cut.stdout.splitlines() == ["n", "0", "1", "2", "3", "4"]
    assert cut.stderr == "rows: 5 of 40 (truncated)\n"
    table = CliRunner().invoke(cli, ["sql", str(data), "SELECT n FROM n", "--limit", "2", "--format", "table"])
    assert table.stdout.splitlines()[-1] == "rows: 2 of 40 (truncated)"
    whole = CliRunner().invoke(cli, ["sql", str(data), "SELECT n FROM n", "--limit", "40"])
    assert whole.stderr == ""
