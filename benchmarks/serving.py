"""A model server as a child process for the benchmarks: a free loopback port, started, waited for
until a URL answers 200, and stopped on the way out (terminate, then kill)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(url: str) -> bool:
    """Whether a GET of ``url`` answers 200 now."""
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def serving(command: list[str], ready_url: str, log: Path, *, name: str, wait_s: float) -> Iterator[None]:
    """Run ``command`` (output to ``log``) until the block ends; enter once ``ready_url`` answers."""
    with open(log, "ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + wait_s
            while not answers(ready_url):
                if process.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"{name} did not start; see {log}")
                time.sleep(0.5)
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
