"""What a result of huge cells costs the process that fetches it (docs/data.md, issue 33 item 5).

The door: `SELECT repeat('a', 1 MiB - 64) AS a, … AS d FROM range(500)` fetched with limit 500, as
explore_data, MCP `query` and `datasolver sql --limit 500` do. Each source tree given runs it through
`datasolver sql` in a child process under an address-space limit (so an unbounded one fails instead of
taking the machine), side by side in one run: wall seconds, peak RSS, exit status, rows printed.

    python benchmarks/result_budget.py [--src OLD_TREE/src ...] [--as-limit-gib 3]

`--src` adds a source tree to compare, e.g. the commit before the budget:
    git archive 9c7de8a src | tar -x -C /tmp/old && python benchmarks/result_budget.py --src /tmp/old/src
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CELL = (1 << 20) - 64
QUERY = ", ".join(f"repeat('{c}', {CELL}) AS {c}" for c in "abcd")
CHILD = """
import resource, sys
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from datasolver.cli import cli
try:
    cli.main(sys.argv[3:], standalone_mode=False)
finally:
    open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def measure(src: Path, folder: Path, limit: int) -> str:
    peak_file = folder / "peak.txt"
    peak_file.unlink(missing_ok=True)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(peak_file), str(limit), "sql", str(folder),
         f"SELECT {QUERY} FROM range(500)", "--limit", "500"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(src)}, check=False)
    wall = time.monotonic() - started
    peak = int(peak_file.read_text()) / 1024 if peak_file.is_file() else float("nan")
    shown = max(0, len(done.stdout.splitlines()) - 1) if done.returncode == 0 else 0
    last = (done.stderr.strip().splitlines() or [""])[-1][:120]
    return f"{src}: exit {done.returncode}, {wall:.1f} s, peak RSS {peak:.0f} MB, rows printed {shown}; {last}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, action="append", default=[], help="another source tree to compare")
    parser.add_argument("--as-limit-gib", type=float, default=3.0, help="address-space limit of each child")
    args = parser.parse_args()
    limit = int(args.as_limit_gib * (1 << 30))
    print(f"load average {os.getloadavg()[0]:.1f}, address-space limit {args.as_limit_gib:g} GiB")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "t.csv").write_text("x\n1\n", encoding="utf-8")
        for src in [REPO / "src", *args.src]:
            print(measure(src, folder, limit))


if __name__ == "__main__":
    main()
