"""Issue 16 point 5, through a real MCP client: argument errors in the one JSON error shape, SQL
syntax errors named as such (writes still refused), unknown tables answered `retry` with the
nearest real names by every tool, and rows and columns listed for every source."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from datasolver.mcp_server import build_server
from tests.helpers.solver import make_tiny_task
from tests.helpers.datafiles import sqlite_file
from tests.helpers.mcp import texts

RECORDS = [{"id": i, "name": f"p{i}", "info": {"price": i * 2}} for i in range(1, 8)]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    (folder / "json").mkdir(parents=True)
    (folder / "sales.csv").write_text("region,amount\nNorth,10\nSouth,9\nEast,9\nWest,1\n", encoding="utf-8")
    (folder / "json" / "products.json").write_text(
        json.dumps({"table": "products", "records": RECORDS}), encoding="utf-8")
    (folder / "json" / "events.jsonl").write_text(
        "".join(json.dumps({"event": f"e{i}", "day": i}) + "\n" for i in range(5)), encoding="utf-8")
    sqlite_file({"customers": ("cid INTEGER, city TEXT", [(1, "Paris"), (2, "Oslo"), (3, "Rome")])})(
        folder / "shop.db")
    return folder


def error_of(result) -> dict:
    assert result.is_error, texts(result)
    return json.loads(texts(result))


async def _in_process(data: Path, work) -> None:
    with build_server(data) as server:
        async with Client(server.mcp) as client:
            await work(client)


def run_in_process(data: Path, work) -> None:
    asyncio.run(_in_process(data, work))


def test_argument_validation_errors_come_back_in_the_one_json_shape(data: Path) -> None:
    async def work(client: Client) -> None:
        for name, args in [("query", {}), ("query", {"sql": ["not", "text"]}),
                           ("render", {"source": "@1", "max_rows": "many"})]:
            error = error_of(await client.call_tool(name, args))
            assert set(error) == {"ok", "error", "message"} and error["ok"] is False, error
            assert error["error"] == "retry"
            assert error["message"].startswith(f"invalid arguments for {name}: ")
            assert "pydantic" not in error["message"] and "http" not in error["message"]
        unknown = error_of(await client.call_tool("no_such_tool", {}))
        assert unknown["error"] == "retry" and "list_tables" in unknown["message"]

    run_in_process(data, work)


def test_a_misspelt_select_is_a_syntax_error_and_writes_are_still_refused(data: Path) -> None:
    async def work(client: Client) -> None:
        typo = error_of(await client.call_tool("query", {"sql": "SELEC * FRM sales"}))
        assert typo["error"] == "failed"
        assert typo["message"].startswith("SqlSyntaxError: syntax error")
        assert "ReadOnlyViolation" not in typo["message"] and "SELECT" in typo["message"]
        for write in ["DELETE FROM sales", "INSERT INTO sales VALUES ('x', 1", "DROP TABLE sales",
                      "UPDATE sales SET amount = 0 WHERE", "COPY sales TO '/tmp/x.csv'"]:
            refused = error_of(await client.call_tool("query", {"sql": write}))
            assert refused["error"] == "failed" and refused["message"].startswith("ReadOnlyViolation"), write
    run_in_process(data, work)
    assert (data / "sales.csv").read_text(encoding="utf-8").count("\n") == 5


def test_every_tool_answers_retry_with_the_nearest_names_for_an_unknown_table(data: Path) -> None:
    calls = [
        ("query", {"sql": "SELECT * FROM sale"}),
        ("query", {"sql": "SELECT s.region FROM sales s JOIN custmers c ON s.amount = c.cid"}),
        ("describe_table", {"table": "sale"}),
        ("filter", {"source": "sale", "where": "amount > 1"}),
        ("sort", {"source": "sale", "by": [{"column": "amount"}]}),
        ("join_keys", {"left": "sales", "right": "custmers"}),
    ]

    async def work(client: Client) -> None:
        for name, args in calls:
            error = error_of(await client.call_tool(name, args))
            assert error["error"] == "retry", (name, error)
            assert "UnknownTable" in error["message"], (name, error)
            assert "duckdb_tables" not in error["message"]
            wanted = "sales" if "sale" in json.dumps(args) and "custmers" not in json.dumps(args) else "customers"
            assert f"Nearest: {wanted}" in error["message"], (name, error)

    run_in_process(data, work)


def test_list_tables_gives_rows_and_columns_for_every_source(data: Path) -> None:
    async def work(client: Client) -> None:
        listing = texts(await client.call_tool("list_tables", {}))
        lines = {line.split(" (")[0][2:]: line for line in listing.splitlines()}
        assert lines["products"].startswith("- products (7 rows; ") and lines["products"].endswith(
            ": id, name, info_price"), listing
        assert lines["events"].startswith("- events (5 rows; ") and lines["events"].endswith(": event, day")
        assert lines["customers"].startswith("- customers (3 rows; ") and lines["customers"].endswith(": cid, city")
        assert lines["sales"].endswith(": region, amount")
        assert "?" not in listing

    run_in_process(data, work)


def test_explore_data_answers_retry_for_an_unknown_table_in_sql(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")

    async def work(client: Client) -> None:
        error = error_of(await client.call_tool("explore_data", {"query": "SELECT * FROM orderz"}))
        assert error["error"] == "retry" and "Nearest: orders" in error["message"], error

    with build_server(task, scratch_root=tmp_path / "scratch") as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                await work(client)
        asyncio.run(main())


@pytest.mark.slow
def test_the_same_answers_over_stdio(data: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "datasolver", "mcp", str(data)])

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            bad_args = error_of(await client.call_tool("query", {}))
            assert bad_args["error"] == "retry" and bad_args["message"].startswith("invalid arguments for query")
            typo = error_of(await client.call_tool("query", {"sql": "SELEC * FRM sales"}))
            assert typo["message"].startswith("SqlSyntaxError")
            unknown = error_of(await client.call_tool("query", {"sql": "SELECT * FROM sale"}))
            assert unknown["error"] == "retry" and "Nearest: sales" in unknown["message"]
            assert "? rows" not in texts(await client.call_tool("list_tables", {}))

    asyncio.run(main())
