"""Watching processes from the test side through /proc (Linux): whether one is alive, and which
hold a file open. The host's /proc lists the processes of every PID namespace, a sandboxed run's
included, whatever their command line (a warm run's is the zygote's)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def holders(path: Path) -> set[int]:
    """Live processes (zombies aside) that hold `path` open."""
    target, found = str(path.resolve()), set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                held = os.readlink(f"/proc/{entry.name}/fd/{fd}") == target
            except OSError:
                continue
            if held and alive(int(entry.name)):
                found.add(int(entry.name))
    return found


def all_gone(path: Path, within_s: float = 10.0) -> bool:
    """Whether every process holding `path` open has exited within `within_s`."""
    deadline = time.monotonic() + within_s
    while holders(path):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
