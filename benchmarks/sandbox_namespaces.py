"""What the IPC and UTS namespaces cost a sandboxed run, cold and warm.

One process runs `--runs` sandboxed `python -c pass` runs through `run_sandboxed`, cold (a fresh
launcher and interpreter each) or warm (forked from a fork server's zygote, started once and
counted in), with the IPC + UTS namespaces on (the default) or off (`SandboxLimits.isolate_ipc`).
The figure is the whole process, side by side, from farm-bench:

    farm-bench -n 5 --timeout 600 --vs '.venv/bin/python benchmarks/sandbox_namespaces.py --path cold --ipc off' \\
        -- .venv/bin/python benchmarks/sandbox_namespaces.py --path cold --ipc on
    (the same with --path warm)

It also prints its own median wall time per run, so one call shows the per-run difference.

Measured 2026-12-01 on the 2-core development machine at load 9 (other test suites running), 3
pairs of 15 runs each: cold, on/off CPU 1.41/1.37 s (A/B 1.03, range 0.98-1.09), wall A/B 1.02;
warm, CPU 1.35/1.64 s (A/B 0.95, range 0.80-0.97), wall A/B 0.96. The two namespaces cost less
than the noise: a few milliseconds of a run's ~100-250 ms at most.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from datasolver.sandbox import SandboxLimits, run_sandboxed
from datasolver.sandbox.fork_server import ForkServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", choices=("cold", "warm"), default="cold")
    parser.add_argument("--ipc", choices=("on", "off"), default="on")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    limits = SandboxLimits(timeout_s=60, isolate_ipc=args.ipc == "on")
    server = ForkServer().start() if args.path == "warm" else None
    walls = []
    try:
        with tempfile.TemporaryDirectory(prefix="datasolver-bench-") as scratch:
            work = Path(scratch)
            for _ in range(args.runs):
                started = time.perf_counter()
                run = run_sandboxed([sys.executable, "-c", "pass"], cwd=work, write_dirs=[work], log_dir=work,
                                    limits=limits, fork_server=server or False)
                walls.append(time.perf_counter() - started)
                assert run.returncode == 0 and run.warm == (server is not None), (run.stderr, run.notes)
                assert run.guards.get("ipc_namespace", False) == (args.ipc == "on"), run.guards
    finally:
        if server is not None:
            server.close()
    print(f"{args.path} ipc={args.ipc}: median {statistics.median(walls) * 1000:.1f} ms per run over {args.runs}")


if __name__ == "__main__":
    main()
