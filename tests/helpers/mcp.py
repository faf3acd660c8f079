"""Driving `datasolver mcp`: a served process on a free loopback port, the initialize request, and
the text of a tool result."""

from __future__ import annotations

from collections.abc import Callable

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}


def numbers_folder(tmp_path: Path) -> Path:
    """A data folder with one table, big.csv (n = 0..999): enough rows for a runaway cross join."""
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "big.csv").write_text("n\n" + "\n".join(map(str, range(1000))) + "\n", encoding="utf-8")
    return folder


def texts(result) -> str:
    """A tool result's text blocks, one per line."""
    return "\n".join(block.text for block in result.content)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(args: list[str], tmp: Path, **popen) -> subprocess.Popen:
    """`datasolver mcp ARGS` in a child with its temp folder under `tmp` and no token from the environment."""
    env = dict(os.environ, TMPDIR=str(tmp))
    env.pop("DATASOLVER_MCP_TOKEN", None)
    return subprocess.Popen([sys.executable, "-m", "datasolver", "mcp", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


def wait_listening(process: subprocess.Popen, port: int, address: str = "127.0.0.1", *, within_s: float = 60,
                   errors: Callable[[], str] | None = None) -> None:
    """Return once `process` accepts connections on `port`; fail with its stderr (or `errors()`, for a
    server whose stderr goes elsewhere) if it ended or took `within_s`."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                said = errors() if errors is not None else process.stderr.read().decode(errors="replace")
                pytest.fail(f"server did not start: {said[-2000:]}")
            time.sleep(0.1)


def terminate(process: subprocess.Popen, grace_s: float = 10) -> None:
    """SIGTERM (the server's own way out), then SIGKILL after `grace_s`; the process reaped either way."""
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()
