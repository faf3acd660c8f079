"""What a sandboxed run may touch and use: its limits (`SandboxLimits`), its environment
(`scrub_env`), the launcher's configuration and the read allow-list.

Reads (and executes) are allowed beneath: the folders of the run (the task scratch folder), the
targets of the symlinks in its non-writable part (context/ links into the input: those files
only, not their neighbours; a link to a folder is left out with a note), the Python installation and its import paths, the datasolver
package, system libraries and programs, a few files of /etc that the C library and Python read,
`/dev/null`, `/dev/urandom` and the process's own `/proc/self`. Everything else (the home
folder, `/etc/shadow`, other tasks, gold answers beside the input) is unreadable.
"""

from __future__ import annotations

import os
import re
import site
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from datasolver.settings import check_settings, choice, count, seconds, switch

GiB = 1 << 30

# Variables passed through (after the secret filter); everything else is dropped.
_ENV_ALLOWED = re.compile(
    r"^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TERM|PYTHONPATH|PYTHONHASHSEED|VIRTUAL_ENV"
    r"|DATASOLVER_MAX_FILE_BYTES|DATASOLVER_MAX_INPUT_BYTES)$"  # the same input caps as the parent
)
# Names that look like credentials are never passed, even when a caller asks for them.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT", re.IGNORECASE)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits and isolation switches for one sandboxed run."""

    timeout_s: float = seconds(120.0, "wall-clock seconds before the whole tree is killed")
    memory_bytes: int | None = count(8 * GiB, "`RLIMIT_AS` per process: address space, not resident memory",
                                     optional=True)
    cpu_seconds: int | None = count(None, "`RLIMIT_CPU`; None: timeout × min(cpus, 8) + 10, a backstop only",
                                    optional=True)
    file_size_bytes: int | None = count(2 * GiB, "`RLIMIT_FSIZE`: the largest single file written", optional=True)
    max_processes: int | None = count(256, "tasks (threads too) in the run's PID namespace: pid_max, "
                                      "`RLIMIT_NPROC`, the cgroup's pids.max", optional=True)
    tree_memory_bytes: int | None = count(8 * GiB, "resident memory of the whole tree: the cgroup's limit, and "
                                          "sampled by the parent", optional=True)
    disk_bytes: int | None = count(8 * GiB, "bytes added beneath the writable folders during the run",
                                   optional=True)
    max_files: int | None = count(100_000, "files, folders and links added beneath the writable folders (inodes)",
                                  optional=True)
    landlock: Literal["required", "best_effort", "off"] = choice(
        "best_effort", "Landlock: refuse to run without it, use it when the kernel has it, or not at all",
        ("required", "best_effort", "off"))
    confine_reads: bool = switch(True, "Landlock read rules: only the allow-list (read_allowlist) is readable")
    block_unix_sockets: bool = switch(True, "seccomp: socket() only for AF_INET, AF_INET6 and routing netlink "
                                      "(unix, vsock, packet, alg … refused), no io_uring, no kernel keyring calls, "
                                      "no system call of another ABI")
    isolate_network: bool = switch(True, "a network namespace (with the user + PID namespaces) when it works here")
    isolate_ipc: bool = switch(True, "IPC + UTS namespaces: no SysV IPC object of another process, the host name "
                               "hidden")

    def __post_init__(self) -> None:
        check_settings(self)

    def resolved_cpu_seconds(self) -> int | None:
        if self.cpu_seconds is not None:
            return self.cpu_seconds
        return int(self.timeout_s * min(os.cpu_count() or 1, 8)) + 10


def scrub_env(
    environ: Mapping[str, str], *, extra: Mapping[str, str] | None = None, home: Path | None = None
) -> tuple[dict[str, str], list[str]]:
    """An allow-listed environment with every key/token-like name removed.

    Returns the environment and the names of requested extras that were refused.
    """
    env = {k: v for k, v in environ.items() if _ENV_ALLOWED.match(k) and not SECRET_NAME.search(k)}
    refused = []
    for key, value in (extra or {}).items():
        if SECRET_NAME.search(key):
            refused.append(key)
        else:
            env[key] = value
    if home is not None:
        # Caches that libraries write under $HOME or $TMPDIR land in the writable scratch.
        for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
            env[key] = str(home)
    env.setdefault("PATH", os.defpath)
    return env, refused


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


@dataclass(frozen=True)
class ReadAllowlist:
    """What a run may read: whole folders, single files, and the links left out (one note each)."""

    folders: list[str]
    files: list[str]
    notes: list[str] = field(default_factory=list)


def read_allowlist(read_dirs: list[Path], write_dirs: list[Path]) -> ReadAllowlist:
    """The folders and single files a run may read; write_dirs are readable through their own rule.

    A link in a read folder opens exactly its target when that is a regular file; a link to a
    folder (`context/csv/zz -> /`) or to anything else is left out with a note, never allowed whole.
    """
    writable = [Path(d).resolve() for d in write_dirs]
    folders = [str(Path(d).resolve()) for d in read_dirs] + python_paths()
    folders += [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    files = [f for f in SYSTEM_FILES if os.path.exists(f)]
    notes = []
    for base in read_dirs:
        for link in _trusted_links(Path(base), writable):
            target = link.resolve()
            if target.is_file():
                files.append(str(target))
            elif target.exists():
                kind = "a folder" if target.is_dir() else "not a regular file"
                notes.append(f"link {link.relative_to(base)} left out of the read allow-list: its target {target} "
                             f"is {kind} (only linked files are readable)")
    if os.path.isdir(PROC_SELF):
        folders.append(PROC_SELF)
    return ReadAllowlist(sorted(set(folders)), sorted(set(files)), notes)


def _trusted_links(base: Path, writable: list[Path]) -> list[Path]:
    """Symlinks beneath `base`, outside the writable folders (what the sandbox planted is not trusted)."""
    links = []
    for dirpath, dirnames, filenames in os.walk(base):  # symlinked folders are listed, not entered
        here = Path(dirpath)
        links += [here / n for n in dirnames + filenames if (here / n).is_symlink()]
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink() and (here / d).resolve() not in writable]
    return links


def launch_config(write_dirs: list[Path], limits: SandboxLimits, *, read_dirs: list[Path],
                  status_fd: int | None) -> tuple[dict, list[str]]:
    """The launcher's JSON configuration (launch.spawn_contained / confine_and_exec), and the notes
    of what the read allow-list left out."""
    config: dict = {
        "parent_pid": os.getpid(),
        "write_dirs": [str(Path(d).resolve()) for d in write_dirs],
        "write_files": [p for p in ("/dev/null",) if os.path.exists(p)],
        "landlock": limits.landlock,
        "namespaces": True,
        "network": limits.isolate_network,
        "ipc": limits.isolate_ipc,
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
        allowed = read_allowlist(read_dirs, write_dirs)
        config["read_dirs"], config["read_files"] = allowed.folders, allowed.files
        return config, allowed.notes
    return config, []
