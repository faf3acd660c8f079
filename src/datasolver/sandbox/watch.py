"""Parent-side watch over a sandboxed process tree: its processes, their memory, disk written
and files made (inodes).

The kernel bounds each process (rlimits) and, in a PID namespace, how many there are; the sum
over the tree (proportional set size, so that pages shared after fork count once) is watched here, by sampling /proc and the writable folders, and the tree is
killed when it goes over. Sampling bounds the overshoot to what the tree can allocate or write
between two samples.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from datasolver.sandbox.cgroup import TreeCgroup
from datasolver.sizes import human_size

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def process_tree(root_pid: int) -> list[int]:
    """`root_pid` and all its descendants now alive (from the parent links in /proc)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return [root_pid]
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(name))
    tree, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def resident_bytes(pids: list[int]) -> int:
    """Sum of resident memory of `pids` (pages shared after fork count once per process)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                total += int(fh.read().split()[1]) * _PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def proportional_bytes(pids: list[int]) -> int:
    """Sum of the proportional set size of `pids` (a page shared by n processes counts 1/n).

    Exact where resident_bytes over-counts: the copy-on-write pages that forked children share
    (a warm run shares pandas & co. with its zygote). Reading it costs ~100x more than statm, so
    it is only asked when the resident sum is over a budget. Falls back to resident memory for a
    process whose smaps_rollup cannot be read.
    """
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, IndexError, ValueError):
            total += resident_bytes([pid])
    return total


def disk_usage(folders: list[Path]) -> tuple[int, int]:
    """(bytes allocated, entries: files, folders and links) beneath `folders` (symlinks not followed)."""
    total = entries = 0
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            entries += len(filenames) + len(dirnames)
            for name in filenames + dirnames:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
                except OSError:
                    continue
    return total, entries


def kill_tree(root_pid: int) -> None:
    """SIGKILL the process group of `root_pid` and every descendant still linked to it."""
    try:
        os.killpg(root_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in process_tree(root_pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass
class TreeWatch:
    """Checks a running tree against its memory and disk budgets, at most every `every_s`."""

    root_pid: int
    memory_bytes: int | None
    disk_bytes: int | None
    folders: list[Path] = field(default_factory=list)
    max_files: int | None = None  # files, folders and links added beneath `folders` (inodes)
    cgroup: TreeCgroup | None = None  # the kernel enforces its memory limit; the watch reports its OOM kills
    every_s: float = 0.5  # a /proc scan costs a few ms (tens under heavy load)
    disk_every_s: float = 1.0
    peak_memory: int = 0
    _disk_start: int = 0
    _files_start: int = 0
    _next: float = 0.0
    _next_disk: float = 0.0

    def __post_init__(self) -> None:
        if self.disk_bytes is not None or self.max_files is not None:
            self._disk_start, self._files_start = disk_usage(self.folders)
        started = time.monotonic()  # first samples one interval in: short runs pay no /proc scan
        self._next, self._next_disk = started + self.every_s, started + self.disk_every_s

    def over_budget(self, now: float | None = None) -> str | None:
        """Why the tree must be killed now, or None."""
        now = time.monotonic() if now is None else now
        if self.cgroup is not None and self.memory_bytes is not None and self.cgroup.oom_kills():
            return (f"the process tree hit its {human_size(self.memory_bytes)} memory limit "
                    "(the kernel killed a process of it)")
        if self.memory_bytes is not None and now >= self._next:
            self._next = now + self.every_s
            tree = process_tree(self.root_pid)
            used = resident_bytes(tree)  # an upper bound: shared pages count once per process
            if used > self.memory_bytes:
                used = proportional_bytes(tree)
                self._next = time.monotonic() + self.every_s  # the slow scan does not run back to back
            self.peak_memory = max(self.peak_memory, used)
            if used > self.memory_bytes:
                return (f"the process tree used {human_size(used)} of memory, over its "
                        f"{human_size(self.memory_bytes)} limit")
        if (self.disk_bytes is not None or self.max_files is not None) and now >= self._next_disk:
            self._next_disk = now + self.disk_every_s
            used, entries = disk_usage(self.folders)
            written, made = used - self._disk_start, entries - self._files_start
            if self.disk_bytes is not None and written > self.disk_bytes:
                return (f"the run wrote {human_size(written)} to disk, over its "
                        f"{human_size(self.disk_bytes)} limit")
            if self.max_files is not None and made > self.max_files:
                return f"the run made {made:,} files, folders and links, over its limit of {self.max_files:,}"
        return None
