"""The MCP server under pressure: a runaway query, shutdown signals, and exposure beyond loopback.

Before: tools ran on the event loop (one slow `query` froze every client), nothing timed out,
SIGINT was ignored on stdio, SIGTERM left temp folders behind, and `--host 0.0.0.0` served with
no token and no Host/Origin checks.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from datasolver.mcp_http import RemoteExposureError, is_loopback, plan_exposure
from datasolver.mcp_server import build_server
from tests.helpers.solver import make_tiny_task
from tests.helpers.mcp import INITIALIZE, free_port, numbers_folder, serve, stop, texts, wait_listening

RUNAWAY = "SELECT count(*) FROM big a, big b, big c, big d WHERE hash(a.n, b.n, c.n, d.n) % 1000 = 7"
@pytest.fixture
def data(tmp_path: Path) -> Path:
    return numbers_folder(tmp_path)


def test_other_clients_are_served_while_a_query_runs(data: Path) -> None:
    with build_server(data, query_timeout_s=600) as server:
        catalog = server.package.catalog
        assert server.preload.ready.wait(60)  # the server's own load of the tables is done: `busy` is the query

        async def main() -> None:
            async with Client(server.mcp) as slow_client, Client(server.mcp) as other:
                slow = asyncio.create_task(slow_client.call_tool("query", {"sql": RUNAWAY}))
                while not catalog.busy:
                    await asyncio.sleep(0.01)
                listed = await asyncio.wait_for(other.list_tools(), 60)  # the loop is free
                assert "query" in [t.name for t in listed.tools]
                assert not slow.done()
                assert catalog.interrupt()
                result = await asyncio.wait_for(slow, 60)
                assert result.is_error and "interrupted" in texts(result)
                again = await other.call_tool("query", {"sql": "SELECT count(*) AS n FROM big"})
                assert not again.is_error, texts(again)

        asyncio.run(main())


def test_a_query_past_the_timeout_comes_back_as_an_error(data: Path) -> None:
    with build_server(data, query_timeout_s=0.3) as server:
        async def main() -> None:
            async with Client(server.mcp) as client:
                result = await client.call_tool("query", {"sql": RUNAWAY})
                assert result.is_error
                assert "timed out after 0.3 s" in json.loads(texts(result))["message"]

        asyncio.run(main())


def test_exposure_rules() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("127.8.0.1")  # loopback range, not canonical loopback: needs --allow-remote
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.10") and not is_loopback("example.org")
    loopback, generated = plan_exposure("127.0.0.1", 8000, allow_remote=False, token=None)
    assert loopback.token is None and not generated
    assert loopback.transport_security().enable_dns_rebinding_protection  # ours, on every bind
    with pytest.raises(RemoteExposureError, match="--allow-remote"):
        plan_exposure("0.0.0.0", 8000, allow_remote=False, token=None)
    remote, generated = plan_exposure("0.0.0.0", 8000, allow_remote=True, token=None, allowed_hosts=["data.lan"])
    assert generated and len(remote.token) >= 40
    rules = remote.transport_security()
    assert rules.enable_dns_rebinding_protection and "data.lan:*" in rules.allowed_hosts
    assert "evil.example" not in " ".join(rules.allowed_hosts + rules.allowed_origins)
    given, generated = plan_exposure("0.0.0.0", 8000, allow_remote=True, token="secret-token")
    assert given.token == "secret-token" and not generated


@pytest.mark.slow
def test_non_loopback_host_without_allow_remote_is_refused(data: Path, tmp_path: Path) -> None:
    port = free_port()
    process = serve([str(data), "--http", str(port), "--host", "0.0.0.0"], tmp_path)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        stop(process)
        pytest.fail("the server started serving 0.0.0.0 without --allow-remote")
    assert process.returncode == 1
    assert "--allow-remote" in err.decode()


def _post(port: int, headers: dict[str, str]) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(INITIALIZE).encode(),
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_remote_server_needs_the_bearer_token_and_a_known_host(data: Path, tmp_path: Path) -> None:
    port = free_port()
    process = serve([str(data), "--http", str(port), "--host", "0.0.0.0", "--allow-remote"], tmp_path)
    try:
        line = process.stderr.readline().decode()
        assert line.startswith("bearer token"), line
        token = line.rsplit(" ", 1)[-1].strip()
        wait_listening(process, port)
        assert _post(port, {}) == 401
        assert _post(port, {"Authorization": "Bearer wrong"}) == 401
        assert _post(port, {"Authorization": f"Bearer {token}", "Host": "evil.example"}) == 421
        assert _post(port, {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}) == 403

        async def main() -> None:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with http, Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client:
                result = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM big"})
                assert not result.is_error and "1000" in texts(result)

        asyncio.run(main())
    finally:
        stop(process)


def _leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("datasolver-"))


@pytest.mark.slow
@pytest.mark.parametrize("transport,sig", [("stdio", signal.SIGINT), ("http", signal.SIGTERM)])
def test_a_signal_stops_the_server_and_removes_its_temp_folders(tmp_path: Path, transport: str, sig: int) -> None:
    task = make_tiny_task(tmp_path / "input")
    temp = tmp_path / "temp"
    temp.mkdir()
    port = free_port()
    args = [str(task)] + (["--http", str(port)] if transport == "http" else [])
    process = serve(args, temp, stdin=subprocess.PIPE)
    try:
        if transport == "stdio":
            process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
            process.stdin.flush()
            assert b'"result"' in process.stdout.readline()
        else:
            wait_listening(process, port)
        assert _leftovers(temp), "the server makes a scratch copy and a catalog under TMPDIR"
        process.send_signal(sig)
        process.wait(timeout=60)
    finally:
        stop(process)
    assert _leftovers(temp) == []
