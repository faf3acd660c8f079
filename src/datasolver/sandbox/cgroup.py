"""A cgroup per sandboxed run: a hard memory and process limit for the whole tree, where writable.

The parent creates the group and sets its limits; the launcher joins it before anything else
(launch.join_cgroup), so every descendant is born inside it. The kernel then enforces the
limit on the tree's memory together (the OOM killer acts inside the group), which the sampled
watch in watch.py cannot do for a burst shorter than its sampling interval.

cgroup v2 is used when this process's group may have children with the memory controller (a
delegated subtree, or running in the root group); else cgroup v1's `memory` and `pids`
hierarchies when they are mounted writable (these machines, as root). Otherwise `create` returns
None with the reason, and the sampled watch is the only tree-wide memory bound.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "datasolver-run-"
_REMOVE_WAIT_S = 2.0  # the kernel frees a killed tree's memory asynchronously; rmdir waits for it


@dataclass
class TreeCgroup:
    """One run's group: a folder per hierarchy (v2: one; v1: memory and pids)."""

    version: int
    memory_dir: Path
    pids_dir: Path | None

    @property
    def procs_files(self) -> list[str]:
        dirs = [self.memory_dir] + ([self.pids_dir] if self.pids_dir and self.pids_dir != self.memory_dir else [])
        return [str(d / "cgroup.procs") for d in dirs]

    def oom_kills(self) -> int:
        """Processes of the tree the kernel killed for the group's memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        return _field(self.memory_dir / name, "oom_kill")

    def memory_peak(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.memory_dir / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def remove(self) -> None:
        """Remove the group once its processes are gone (call after the tree was killed and reaped)."""
        for folder in {self.memory_dir, self.pids_dir} - {None}:
            _rmdir_when_empty(folder)


def create(memory_bytes: int | None, max_processes: int | None, root: Path = Path("/")) -> tuple[TreeCgroup | None, str]:
    """A new group with these limits, or (None, why not). `root` lets tests use a fake /proc and /sys."""
    mounts = _cgroup_mounts(root)
    own = _own_groups(root)
    name = f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    reasons = []
    if "" in mounts and "" in own:
        try:
            return _create_v2(mounts[""] / own[""].lstrip("/"), name, memory_bytes, max_processes), "cgroup v2"
        except OSError as exc:
            reasons.append(f"cgroup v2: {exc.strerror or exc}")
    if "memory" in mounts:
        try:
            return _create_v1(mounts, own, name, memory_bytes, max_processes), "cgroup v1"
        except OSError as exc:
            reasons.append(f"cgroup v1: {exc.strerror or exc}")
    return None, "; ".join(reasons) or "no cgroup memory controller mounted"


def _create_v2(parent: Path, name: str, memory_bytes: int | None, max_processes: int | None) -> TreeCgroup:
    controllers = (parent / "cgroup.subtree_control").read_text().split()
    if "memory" not in controllers:  # fails (EBUSY) when the parent holds processes and is not the root
        (parent / "cgroup.subtree_control").write_text("+memory +pids" if "pids" in
                                                       (parent / "cgroup.controllers").read_text().split() else "+memory")
    _sweep_stale(parent)
    folder = parent / name
    folder.mkdir()
    try:
        if memory_bytes:
            (folder / "memory.max").write_text(str(memory_bytes))
            _write_if_present(folder / "memory.swap.max", "0")  # swap must not extend the limit
        if max_processes and (folder / "pids.max").exists():
            (folder / "pids.max").write_text(str(max_processes))
    except OSError:
        _rmdir_when_empty(folder)
        raise
    return TreeCgroup(2, folder, folder)


def _create_v1(mounts: dict[str, Path], own: dict[str, str], name: str, memory_bytes: int | None,
               max_processes: int | None) -> TreeCgroup:
    memory_parent = mounts["memory"] / own.get("memory", "/").lstrip("/")
    _sweep_stale(memory_parent)
    memory_dir = memory_parent / name
    memory_dir.mkdir()
    pids_dir = None
    try:
        if memory_bytes:
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory_bytes))
            _write_if_present(memory_dir / "memory.memsw.limit_in_bytes", str(memory_bytes))
        if max_processes and "pids" in mounts:
            pids_parent = mounts["pids"] / own.get("pids", "/").lstrip("/")
            _sweep_stale(pids_parent)
            pids_dir = pids_parent / name
            pids_dir.mkdir()
            (pids_dir / "pids.max").write_text(str(max_processes))
    except OSError:
        for folder in (memory_dir, pids_dir):
            if folder is not None:
                _rmdir_when_empty(folder)
        raise
    return TreeCgroup(1, memory_dir, pids_dir)


def _cgroup_mounts(root: Path) -> dict[str, Path]:
    """Mount points: '' for the cgroup v2 hierarchy, else each v1 controller's name."""
    found: dict[str, Path] = {}
    try:
        lines = (root / "proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        fields = line.split()
        if " - " not in line:
            continue
        after = line.split(" - ", 1)[1].split()
        fstype, options = after[0], (after[2] if len(after) > 2 else "")
        point = root / fields[4].lstrip("/")
        if fstype == "cgroup2":
            found.setdefault("", point)
        elif fstype == "cgroup":
            for option in options.split(","):
                if option in ("memory", "pids"):
                    found.setdefault(option, point)
    return found


def _own_groups(root: Path) -> dict[str, str]:
    """This process's group per hierarchy ('' for v2), from /proc/self/cgroup."""
    groups: dict[str, str] = {}
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        for controller in controllers.split(",") if controllers else [""]:
            groups[controller] = path
    return groups


def _field(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _write_if_present(path: Path, value: str) -> None:
    if path.exists():
        path.write_text(value)


def _rmdir_when_empty(folder: Path) -> None:
    deadline = time.monotonic() + _REMOVE_WAIT_S
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return  # left behind; swept by the next run of a later process (see _sweep_stale)
            time.sleep(0.02)


def _sweep_stale(parent: Path) -> None:
    """Remove empty groups left by datasolver processes that are gone (a crash skips `remove`)."""
    try:
        entries = list(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        owner = entry.name[len(PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            try:
                entry.rmdir()
            except OSError:
                pass
