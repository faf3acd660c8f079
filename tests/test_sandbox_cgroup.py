"""Which cgroup a run gets, read from /proc/self/mountinfo and /proc/self/cgroup (a fake root here;
tests/test_solver_hostile.py proves the kernel enforces the real one where it is writable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.sandbox import cgroup as sandbox_cgroup

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

V1_MOUNTS = """\
30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
31 25 0:27 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
32 25 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
"""
V2_MOUNTS = "35 25 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def _root(tmp_path: Path, mounts: str, groups: str) -> Path:
    (tmp_path / "proc/self").mkdir(parents=True)
    (tmp_path / "proc/self/mountinfo").write_text(mounts)
    (tmp_path / "proc/self/cgroup").write_text(groups)
    return tmp_path


def test_cgroup_v1_memory_and_pids_groups_under_our_own(tmp_path):
    root = _root(tmp_path, V1_MOUNTS, "9:memory:/batch\n8:pids:/\n7:cpu:/\n")
    (root / "sys/fs/cgroup/memory/batch").mkdir(parents=True)
    (root / "sys/fs/cgroup/pids").mkdir(parents=True)
    group, kind = sandbox_cgroup.create(300 << 20, 64, root=root)
    assert kind == "cgroup v1" and group is not None
    assert group.memory_dir.parent == root / "sys/fs/cgroup/memory/batch"
    assert (group.memory_dir / "memory.limit_in_bytes").read_text() == str(300 << 20)
    assert (group.pids_dir / "pids.max").read_text() == "64"
    assert group.procs_files == [str(group.memory_dir / "cgroup.procs"), str(group.pids_dir / "cgroup.procs")]
    (group.memory_dir / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    (group.memory_dir / "memory.max_usage_in_bytes").write_text("12345\n")
    assert group.oom_kills() == 3 and group.memory_peak() == 12345


def test_cgroup_v2_enables_the_memory_controller_for_the_child(tmp_path):
    root = _root(tmp_path, V2_MOUNTS, "0::/\n")
    top = root / "sys/fs/cgroup"
    top.mkdir(parents=True)
    (top / "cgroup.controllers").write_text("cpu memory pids\n")
    (top / "cgroup.subtree_control").write_text("cpu\n")
    group, kind = sandbox_cgroup.create(1 << 30, None, root=root)
    assert kind == "cgroup v2" and group is not None
    assert (top / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (group.memory_dir / "memory.max").read_text() == str(1 << 30)
    assert group.procs_files == [str(group.memory_dir / "cgroup.procs")]
    (group.memory_dir / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n")
    assert group.oom_kills() == 1


def test_no_writable_controller_gives_the_reason(tmp_path):
    root = _root(tmp_path, V1_MOUNTS.splitlines()[2] + "\n", "7:cpu:/\n")
    assert sandbox_cgroup.create(1 << 30, 10, root=root) == (None, "no cgroup memory controller mounted")
    root2 = _root(tmp_path / "b", V1_MOUNTS, "9:memory:/\n8:pids:/\n")  # mounted, but the folder is missing
    group, why = sandbox_cgroup.create(1 << 30, 10, root=root2)
    assert group is None and why.startswith("cgroup v1: ")


def test_groups_left_by_dead_processes_are_swept(tmp_path):
    root = _root(tmp_path, V1_MOUNTS, "9:memory:/\n8:pids:/\n")
    memory = root / "sys/fs/cgroup/memory"
    (memory / "datasolver-run-999999999-abcd").mkdir(parents=True)  # no such process
    (root / "sys/fs/cgroup/pids").mkdir(parents=True)
    group, _ = sandbox_cgroup.create(1 << 30, None, root=root)
    assert not (memory / "datasolver-run-999999999-abcd").exists()
    assert group is not None and group.memory_dir.exists()
