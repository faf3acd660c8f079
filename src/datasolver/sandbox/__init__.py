"""The sandbox room: run a program confined (namespaces, Landlock, seccomp, cgroup, rlimits),
supervised from the parent (pipes, timeout, tree memory/disk/inode watch, tree kill), cold or
forked from a warm zygote; read what it wrote without following links; report what this machine
gives (`datasolver doctor`). It knows nothing of what it runs. docs/sandbox.md.
"""

from datasolver.sandbox.errors import SandboxError, UnsafeFile
from datasolver.sandbox.policy import SandboxLimits
from datasolver.sandbox.run import SandboxRun, run_sandboxed, stop_all_runs

__all__ = [
    "SandboxError",
    "SandboxLimits",
    "SandboxRun",
    "UnsafeFile",
    "run_sandboxed",
    "stop_all_runs",
]
