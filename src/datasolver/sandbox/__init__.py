"""The sandbox room: run a program confined (namespaces, Landlock, seccomp, cgroup, rlimits),
supervised from the parent (pipes, timeout, tree memory/disk/inode watch, tree kill), cold or
forked from a warm zygote; read what it wrote without following links; report what this machine
gives (`datasolver doctor`). It knows nothing of what it runs. docs/sandbox.md.
"""

from datasolver.sandbox.errors import SandboxError, UnsafeFile
from datasolver.sandbox.policy import GiB, SandboxLimits, scrub_env
from datasolver.sandbox.run import SandboxRun, kernel_features, landlock_abi, run_sandboxed, stop_all_runs

__all__ = [
    "GiB",
    "SandboxError",
    "SandboxLimits",
    "SandboxRun",
    "UnsafeFile",
    "kernel_features",
    "landlock_abi",
    "run_sandboxed",
    "scrub_env",
    "stop_all_runs",
]
