"""`datasolver mcp --http` against a network attacker: host spellings, sessions, handles, the token.

Before: `--host 127.0.0.2`, `LOCALHOST` or `0:0:0:0:0:0:0:1` counted as loopback (no token) but
switched the Host/Origin check off (the library enabled it only for three exact strings), so DNS
rebinding reached the server; sessions were unlimited (1,500 opened, none closed); every session
shared one result-handle table (`render @latest` in session B showed session A's rows); and
`--token` stayed readable in /proc/<pid>/cmdline.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from datasolver.mcp_http import RemoteExposureError, is_loopback, normalize_host, plan_exposure
from datasolver.mcp_server import build_server
from tests.helpers.mcp import INITIALIZE, free_port, numbers_folder, serve, stop, texts, wait_listening

EVIL = "evil.example"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return numbers_folder(tmp_path)


def test_host_spellings_are_normalised_and_only_canonical_loopback_is_loopback() -> None:
    assert normalize_host("LOCALHOST") == "127.0.0.1"
    assert normalize_host("0:0:0:0:0:0:0:1") == normalize_host("[::1]") == "::1"
    assert normalize_host("::ffff:127.0.0.1") == "127.0.0.1"
    assert is_loopback("LOCALHOST") and is_loopback("0:0:0:0:0:0:0:1") and is_loopback("::ffff:127.0.0.1")
    assert not is_loopback("127.0.0.2") and not is_loopback("::ffff:127.0.0.2") and not is_loopback("0.0.0.0")
    with pytest.raises(RemoteExposureError, match="only 127.0.0.1 and ::1 count as loopback"):
        plan_exposure("127.0.0.2", 8000, allow_remote=False, token=None)
    remote, generated = plan_exposure("127.0.0.2", 8000, allow_remote=True, token=None)
    assert generated and remote.token and remote.remote
    for spelling in ("LOCALHOST", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"):
        exposure, _ = plan_exposure(spelling, 8000, allow_remote=False, token=None)
        rules = exposure.transport_security()
        assert exposure.host in ("127.0.0.1", "::1") and rules.enable_dns_rebinding_protection
        assert EVIL not in " ".join(rules.allowed_hosts + rules.allowed_origins)


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


def _request(url: str, *, method: str = "POST", headers: dict[str, str] | None = None,
             body: dict | None = INITIALIZE) -> tuple[int, dict[str, str]]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {}


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["LOCALHOST", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])
def test_every_loopback_spelling_keeps_the_host_and_origin_check(data: Path, tmp_path: Path, spelling: str) -> None:
    """A DNS-rebinding page sends Host/Origin of its own domain: refused however loopback was spelt."""
    address = "::1" if normalize_host(spelling) == "::1" else "127.0.0.1"
    if address == "::1" and not _ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    port = free_port()
    process = serve([str(data), "--http", str(port), "--host", spelling], tmp_path)
    try:
        wait_listening(process, port, address)
        url = f"http://{'[::1]' if address == '::1' else address}:{port}/mcp"
        assert _request(url, headers={"Host": f"{EVIL}:{port}"})[0] == 421
        assert _request(url, headers={"Origin": f"http://{EVIL}"})[0] == 403
        assert _request(url)[0] == 200  # the client's own Host header names the loopback address
    finally:
        stop(process)


@pytest.mark.slow
def test_a_loopback_address_other_than_127_0_0_1_needs_allow_remote(data: Path, tmp_path: Path) -> None:
    process = serve([str(data), "--http", str(free_port()), "--host", "127.0.0.2"], tmp_path)
    try:
        _, err = process.communicate(timeout=60)
    except Exception:
        stop(process)
        raise
    assert process.returncode == 1, "served 127.0.0.2 without --allow-remote"
    assert "--allow-remote" in err.decode()


@pytest.mark.slow
def test_sessions_are_capped_end_when_deleted_and_expire_when_idle(data: Path, tmp_path: Path) -> None:
    port = free_port()
    # 3 s idle: the four requests of the cap check fit in it with room for a loaded machine's stalls.
    process = serve([str(data), "--http", str(port), "--max-sessions", "2", "--session-idle-timeout", "3"],
                    tmp_path)
    try:
        wait_listening(process, port)
        url = f"http://127.0.0.1:{port}/mcp"
        first, second = (_request(url) for _ in range(2))
        assert first[0] == second[0] == 200
        assert _request(url)[0] == 503  # the cap: a third session is refused while two are open
        one = first[1]["mcp-session-id"]
        assert _request(url, method="DELETE", headers={"mcp-session-id": one}, body=None)[0] == 200
        third = _request(url)
        assert third[0] == 200  # the closed session's place was freed
        # Both open sessions idle out: new sessions are refused (503) until each place is freed. A
        # new-session request touches neither open session, so asking does not keep them alive.
        accepted, deadline = 0, time.monotonic() + 60
        while accepted < 2 and time.monotonic() < deadline:
            status = _request(url)[0]
            assert status in (200, 503)
            accepted += status == 200
            if status == 503:
                time.sleep(0.2)
        assert accepted == 2, "the idle sessions did not expire within 60 s"
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert _request(url, headers={"mcp-session-id": third[1]["mcp-session-id"]}, body=ping)[0] == 404
    finally:
        stop(process)


def test_each_session_has_its_own_results_and_they_are_freed_when_it_ends(data: Path) -> None:
    port = free_port()
    with build_server(data) as server:
        exposure, _ = plan_exposure("127.0.0.1", port, allow_remote=False, token=None)
        thread = threading.Thread(target=server.run, args=(port, "127.0.0.1", exposure), daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{port}/mcp"
        catalog = server.package.catalog
        result_views = lambda: catalog.own_rows(  # noqa: E731
            "SELECT view_name FROM duckdb_views() WHERE temporary AND view_name LIKE '\\_ask\\_%' ESCAPE '\\'")

        async def main() -> None:
            for _ in range(600):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient())) as b:
                async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient())) as a:
                    made = await a.call_tool("query", {"sql": "SELECT n * 1000 + 7 AS secret FROM big WHERE n = 123"})
                    assert not made.is_error, texts(made)
                    mine = await a.call_tool("render", {"source": "@latest"})
                    assert "123007" in texts(mine)
                    theirs = await b.call_tool("render", {"source": "@latest"})
                    assert theirs.is_error and "123007" not in texts(theirs)
                    assert "No results are stored yet" in texts(theirs)
                    assert len(result_views()) == 1
                    assert len(server.sessions.open_sessions()) == 2
                # A's client ended its session (DELETE): its results are gone, B's session goes on.
                # (The server may still be finishing the DELETE when the client has its answer.)
                for _ in range(200):
                    if len(server.sessions.open_sessions()) == 1:
                        break
                    await asyncio.sleep(0.05)
                assert len(server.sessions.open_sessions()) == 1
                again = await b.call_tool("query", {"sql": "SELECT count(*) AS n FROM big"})
                assert not again.is_error
                assert len(result_views()) == 1  # A's view was dropped, B's is the one left

        try:
            asyncio.run(main())
        finally:
            server.stop()
            thread.join(timeout=30)
        assert not thread.is_alive()


@pytest.mark.slow
def test_the_token_is_masked_on_the_command_line_and_read_from_a_file(data: Path, tmp_path: Path) -> None:
    secret = "tok-" + "x7" * 20
    port = free_port()
    process = serve([str(data), "--http", str(port), "--token", secret], tmp_path)
    try:
        wait_listening(process, port, "127.0.0.1")
        assert secret.encode() not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        url = f"http://127.0.0.1:{port}/mcp"
        assert _request(url)[0] == 401
        assert _request(url, headers={"Authorization": f"Bearer {secret}"})[0] == 200
    finally:
        stop(process)
    assert b"--token on the command line" in process.stderr.read()
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n", encoding="utf-8")
    port = free_port()
    process = serve([str(data), "--http", str(port), "--token-file", str(token_file)], tmp_path)
    try:
        wait_listening(process, port, "127.0.0.1")
        url = f"http://127.0.0.1:{port}/mcp"
        assert _request(url)[0] == 401
        assert _request(url, headers={"Authorization": f"Bearer {secret}"})[0] == 200
    finally:
        stop(process)


def _stderr_until(process, wanted: str, within_s: float = 60) -> list[str]:
    """The server's stderr lines up to the first one holding `wanted` (fails past `within_s`)."""
    import select

    lines: list[str] = []
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.2)
        if ready:
            line = process.stderr.readline().decode(errors="replace")
            if not line:
                break
            lines.append(line.rstrip("\n"))
            if wanted in line:
                return lines
    pytest.fail(f"no {wanted!r} on stderr: {lines[-20:]}")


def test_http_says_where_it_listens_logs_unwrapped_and_a_taken_port_is_one_error(data: Path, tmp_path: Path) -> None:
    # Issue 45 item 4. Before: no line said where the server listens; in a pipe rich wrapped each log
    # record at 80 columns (one record, four lines); a second server on the same port printed
    # uvicorn's "[Errno 98] error while attempting to bind" and did not exit.
    import signal

    port = free_port()
    first = serve([str(data), "--http", str(port), "--table-cache", "off"], tmp_path)
    try:
        said = _stderr_until(first, "listening on")
        assert said[-1] == f"datasolver mcp: listening on http://127.0.0.1:{port}/mcp"
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # it listens once it says so
        second = serve([str(data), "--http", str(port), "--table-cache", "off"], tmp_path)
        try:
            out, err = second.communicate(timeout=60)
        finally:
            stop(second)
        assert second.returncode == 1
        assert f"Error: port {port} is in use" in err.decode()
        assert "Errno" not in err.decode() and "Traceback" not in err.decode()
        first.send_signal(signal.SIGTERM)
        rest = first.communicate(timeout=30)[1].decode(errors="replace").splitlines()
    finally:
        stop(first)
    logged = [line for line in said + rest if "StreamableHTTP" in line or "session manager" in line]
    assert logged and all(line.endswith(("session manager started", "session manager shutting down"))
                          and "INFO mcp.server.streamable_http_manager: StreamableHTTP session manager" in line
                          for line in logged), logged
