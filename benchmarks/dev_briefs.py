"""What a brief's table work costs on the 40 dev tasks: loading (with and without settling text
columns before DuckDB's type check) and profiling (distinct counts by list_unique on small tables
vs count(DISTINCT) everywhere). CPU seconds of this process, each side in the same run on the
same machine, best of `--repeat`; report the ratios.

    python benchmarks/dev_briefs.py [--dev ../shared/tasks/dev] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import datasolver.data.infer_types as infer_types
import datasolver.data.profile as profile
from datasolver.data import Catalog

REPO = Path(__file__).resolve().parents[1]


def _catalogs(tasks: list[Path]) -> list[Catalog]:
    return [Catalog.open(task / "context") for task in tasks]


def load_cpu(tasks: list[Path], shortcut: bool) -> float:
    """CPU seconds to load every table of every task (new catalogs, so nothing is cached)."""
    original = infer_types.surely_text
    if not shortcut:
        infer_types.surely_text = lambda column: False
    try:
        catalogs = _catalogs(tasks)
        start = time.process_time()
        for catalog in catalogs:
            catalog.load()
        spent = time.process_time() - start
    finally:
        infer_types.surely_text = original
    for catalog in catalogs:
        catalog.close()
    return spent


def profile_cpu(catalogs: list[Catalog], list_counts: bool) -> float:
    """CPU seconds to profile every loaded table once."""
    original = profile.LIST_COUNT_MAX_ROWS
    profile.LIST_COUNT_MAX_ROWS = original if list_counts else -1
    try:
        start = time.process_time()
        for catalog in catalogs:
            for name in catalog.names():
                profile.profile_table(catalog, name)
        return time.process_time() - start
    finally:
        profile.LIST_COUNT_MAX_ROWS = original


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=REPO.parent / "shared" / "tasks" / "dev")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tasks = sorted(p for p in (args.dev / "input").glob("task_*") if p.is_dir())
    if not tasks:
        print(f"no dev tasks under {args.dev / 'input'}", file=sys.stderr)
        return 2
    best = lambda f: min(f() for _ in range(args.repeat))  # noqa: E731
    load_new, load_old = best(lambda: load_cpu(tasks, True)), best(lambda: load_cpu(tasks, False))
    catalogs = _catalogs(tasks)
    for catalog in catalogs:
        catalog.load()
    prof_new, prof_old = best(lambda: profile_cpu(catalogs, True)), best(lambda: profile_cpu(catalogs, False))
    tables = sum(len(c.names()) for c in catalogs)
    print(f"{len(tasks)} tasks, {tables} tables; CPU seconds, best of {args.repeat}")
    print(f"load:    text settled early {load_new:.2f}  always checked {load_old:.2f}  ratio {load_new / load_old:.2f}")
    print(f"profile: list_unique small  {prof_new:.2f}  count(DISTINCT)  {prof_old:.2f}  ratio {prof_new / prof_old:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
