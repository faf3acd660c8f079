"""What a sandboxed run may touch: the launcher's configuration and the read allow-list.

Reads (and executes) are allowed beneath: the folders of the run (the task scratch folder), the
targets of the symlinks in its non-writable part (context/ links into the input: those files
only, not their neighbours), the Python installation and its import paths, the datasolver
package, system libraries and programs, a few files of /etc that the C library and Python read,
`/dev/null`, `/dev/urandom` and the process's own `/proc/self`. Everything else (the home
folder, `/etc/shadow`, other tasks, gold answers beside the input) is unreadable.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datasolver.solver.sandbox import SandboxLimits

SYSTEM_DIRS = ("/usr/lib", "/usr/lib64", "/usr/local/lib", "/lib", "/lib64", "/usr/bin", "/bin", "/usr/share/zoneinfo",
               "/usr/share/locale", "/usr/lib/locale", "/etc/alternatives", "/etc/ssl/certs",
               "/sys/fs/cgroup", "/sys/devices/system/cpu")  # the last two: CPU and memory quotas DuckDB reads
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/timezone", "/etc/nsswitch.conf", "/etc/passwd",
                "/etc/group", "/etc/os-release", "/etc/mime.types", "/dev/urandom", "/dev/random", "/dev/zero",
                "/proc/meminfo", "/proc/cpuinfo", "/proc/stat")
PROC_SELF = "/proc/self"  # resolved by the launcher to its own pid, which exec keeps


def python_paths() -> list[str]:
    """The interpreter's installation and import folders (never the current folder or home as such)."""
    import datasolver

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.add(str(Path(sys.executable).resolve().parent.parent))
    roots.add(str(Path(datasolver.__file__).resolve().parent.parent))
    roots.update(site.getsitepackages())
    for entry in sys.path:
        if entry and ("site-packages" in entry or "dist-packages" in entry or entry.endswith(".zip")):
            roots.add(entry)
    return sorted(str(Path(r).resolve()) for r in roots if r and os.path.exists(r))


def read_allowlist(read_dirs: list[Path], write_dirs: list[Path]) -> tuple[list[str], list[str]]:
    """(folders, single files) a run may read; write_dirs are readable through their own rule."""
    writable = [Path(d).resolve() for d in write_dirs]
    folders = [str(Path(d).resolve()) for d in read_dirs] + python_paths()
    folders += [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    files = [f for f in SYSTEM_FILES if os.path.exists(f)]
    for base in read_dirs:
        for link in _trusted_links(Path(base), writable):
            target = link.resolve()
            if target.is_dir():
                folders.append(str(target))
            elif target.is_file():
                files.append(str(target))
    if os.path.isdir(PROC_SELF):
        folders.append(PROC_SELF)
    return sorted(set(folders)), sorted(set(files))


def _trusted_links(base: Path, writable: list[Path]) -> list[Path]:
    """Symlinks beneath `base`, outside the writable folders (what the sandbox planted is not trusted)."""
    links = []
    for dirpath, dirnames, filenames in os.walk(base):  # symlinked folders are listed, not entered
        here = Path(dirpath)
        links += [here / n for n in dirnames + filenames if (here / n).is_symlink()]
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink() and (here / d).resolve() not in writable]
    return links


def launch_config(write_dirs: list[Path], limits: "SandboxLimits", *, read_dirs: list[Path],
                  status_fd: int | None) -> dict:
    """The launcher's JSON configuration (sandbox_launch.spawn_contained / confine_and_exec)."""
    config: dict = {
        "parent_pid": os.getpid(),
        "write_dirs": [str(Path(d).resolve()) for d in write_dirs],
        "write_files": [p for p in ("/dev/null",) if os.path.exists(p)],
        "landlock": limits.landlock,
        "namespaces": True,
        "network": limits.isolate_network,
        "block_unix_sockets": limits.block_unix_sockets,
        "status_fd": status_fd,
        "limits": {
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.resolved_cpu_seconds(),
            "file_size_bytes": limits.file_size_bytes,
            "max_processes": limits.max_processes,
        },
    }
    if limits.confine_reads:
        config["read_dirs"], config["read_files"] = read_allowlist(read_dirs, write_dirs)
    return config
