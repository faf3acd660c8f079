"""Which sandbox protections this machine gives: kernel features probed, then one live run.

`sandbox_report()` is what `datasolver doctor` prints. Each line names a protection, whether it
is in force here, and what provides it (or why it is missing); the live run checks that the
guards the launcher reports are the ones the kernel features promise.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from datasolver.sandbox.policy import SandboxLimits
from datasolver.sandbox.run import kernel_features, run_sandboxed


@dataclass(frozen=True)
class Protection:
    """One line of the report."""

    name: str
    active: bool
    detail: str


def sandbox_report(limits: SandboxLimits = SandboxLimits(timeout_s=60)) -> list[Protection]:
    """Probe this machine and run one sandboxed no-op; return what protects a sandboxed run here."""
    features = kernel_features()
    with tempfile.TemporaryDirectory(prefix="datasolver-doctor-") as scratch:
        work = Path(scratch)
        run = run_sandboxed([sys.executable, "-c", "print('ok')"], cwd=work, write_dirs=[work], log_dir=work,
                            limits=limits)
    guards = run.guards
    abi = int(features.get("landlock_abi", 0))
    pid_ns = bool(guards.get("pid_namespace"))
    cap = guards.get("process_cap", {})
    ns_error = guards.get("namespace_error", features.get("namespace_error", "user namespaces unavailable"))
    return [
        Protection("sandbox starts", run.returncode == 0 and run.stdout == "ok\n",
                   f"exit {run.returncode}" + (f": {run.stderr.strip()[-200:]}" if run.stderr.strip() else "")),
        Protection("writes confined to the scratch folder", bool(guards.get("writes_confined")),
                   f"Landlock ABI {abi}" if guards.get("writes_confined") else guards.get("landlock_error", "no Landlock")),
        Protection("reads confined to the allow-list", bool(guards.get("reads_confined")),
                   f"Landlock ABI {abi} read rules" if guards.get("reads_confined") else "no Landlock read rules"),
        Protection("TCP bind/connect denied", bool(guards.get("tcp_blocked") or guards.get("network_namespace")),
                   "network namespace" if guards.get("network_namespace") else
                   ("Landlock ABI >= 4" if guards.get("tcp_blocked") else "neither a network namespace nor Landlock 4")),
        Protection("UDP and all other network", bool(guards.get("network_namespace")),
                   "network namespace (no interface but a down loopback)" if guards.get("network_namespace") else ns_error),
        Protection("sockets only of the allowed families", bool(guards.get("socket_families")),
                   "seccomp: socket() only for " + ", ".join(guards["socket_families"]) + "; unix, vsock, packet, "
                   "alg and every other family refused; io_uring and other ABIs' system calls refused"
                   if guards.get("socket_families") else guards.get("seccomp_error", "no seccomp filter")),
        Protection("kernel keyrings refused", bool(guards.get("keyrings_blocked")),
                   "seccomp filter: add_key, request_key, keyctl fail with EPERM" if guards.get("keyrings_blocked")
                   else guards.get("seccomp_error", "no seccomp filter")),
        Protection("SysV IPC and POSIX message queues of other processes hidden", bool(guards.get("ipc_namespace")),
                   "IPC namespace" if guards.get("ipc_namespace") else ns_error),
        Protection("host name hidden", bool(guards.get("uts_namespace")),
                   "UTS namespace (the run's host name is 'sandbox')" if guards.get("uts_namespace") else ns_error),
        Protection("signals and abstract unix sockets scoped", bool(guards.get("scoped")),
                   "Landlock ABI >= 6" if guards.get("scoped") else f"Landlock ABI {abi} < 6"),
        Protection("every descendant dies with the run", pid_ns,
                   "PID namespace + PR_SET_PDEATHSIG" if pid_ns else f"process group and parent links only ({ns_error})"),
        Protection("process count bounded for the tree", bool(cap),
                   ", ".join(f"{k}={v}" for k, v in cap.items()) if cap else "no PID namespace: no tree-wide cap"),
        Protection("memory bounded for the tree", limits.tree_memory_bytes is not None,
                   (f"{guards['tree_cgroup']} memory limit {_gib(limits.tree_memory_bytes)} (enforced by the kernel)"
                    if guards.get("tree_cgroup") else
                    f"parent samples resident memory of the tree, limit {_gib(limits.tree_memory_bytes)} "
                    f"(no cgroup: {guards.get('cgroup_error', 'unknown')})")
                   + f"; RLIMIT_AS {_gib(limits.memory_bytes)} per process"),
        Protection("disk written bounded", limits.disk_bytes is not None,
                   f"parent samples the writable folders, limit {_gib(limits.disk_bytes)} and "
                   f"{limits.max_files or 0:,} files; "
                   f"RLIMIT_FSIZE {_gib(limits.file_size_bytes)} per file"),
    ]


def _gib(value: int | None) -> str:
    return "none" if value is None else f"{value / (1 << 30):g} GiB"
