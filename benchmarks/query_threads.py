"""What one query thread buys and costs: the catalog's read-only connection runs each query on one
thread (`catalog.ONE_ORDER`) so rows without ORDER BY come back in one order.

Each side in the same run on the same machine, DuckDB's default thread count (the cores) against
one thread:
- order: how many of the dev oracle queries give their first rows (what run_solver shows) in more
  than one order over `--runs` runs;
- dev: wall seconds to profile every table and run every oracle query of the 40 dev tasks;
- large: wall seconds of one GROUP BY over a synthetic `--rows`-row table (the worst case: a big
  aggregate, where threads help most).

    python benchmarks/query_threads.py [--dev ../shared/tasks/dev] [--runs 20] [--rows 10000000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb

import datasolver.data.duck_settings as duck_settings
from datasolver.data import Catalog, DataError
from datasolver.data.profile import profile_table

REPO = Path(__file__).resolve().parents[1]
SHOWN_ROWS = 5  # run_solver's default show_rows


@contextmanager
def threads(one: bool):
    original = duck_settings.ONE_ORDER
    duck_settings.ONE_ORDER = original if one else {}
    try:
        yield
    finally:
        duck_settings.ONE_ORDER = original


def open_loaded(tasks: list[Path]) -> list[Catalog]:
    catalogs = [Catalog.open(task) for task in tasks]
    for catalog in catalogs:
        catalog.load()
    return catalogs


def _runs(catalog: Catalog, sql: str) -> bool:
    try:
        catalog.sql(sql).df()
        return True
    except DataError:
        return False


def reopen(catalogs: list[Catalog]) -> None:
    """The next query opens a new read-only connection, with the thread setting now in force."""
    for catalog in catalogs:
        catalog._close_read_only()


def varying_orders(catalogs: list[Catalog], sqls: list[str], runs: int) -> int:
    varying = 0
    for catalog, sql in zip(catalogs, sqls):
        seen = {tuple(map(tuple, catalog.sql(sql).df().head(SHOWN_ROWS).itertuples(index=False)))
                for _ in range(runs)}
        varying += len(seen) > 1
    return varying


def dev_wall(catalogs: list[Catalog], sqls: list[str]) -> float:
    start = time.perf_counter()
    for catalog, sql in zip(catalogs, sqls):
        for name in catalog.names():
            profile_table(catalog, name)
        catalog.sql(sql).df()
    return time.perf_counter() - start


def large_catalog(root: Path, rows: int) -> Catalog:
    context = root / "task" / "context"
    context.mkdir(parents=True)
    with duckdb.connect() as con:  # DuckDB writes the CSV: writing it row by row here would dominate
        con.execute(f"COPY (SELECT (random() * 100000)::INT AS k, random() AS v FROM range({rows})) "
                    f"TO '{context / 'big.csv'}' (FORMAT csv, HEADER)")
    catalog = Catalog.open(context.parent)
    catalog.load()
    return catalog


def large_wall(catalog: Catalog, repeat: int) -> float:
    sql = "SELECT k, sum(v) AS s, count(*) AS n FROM big GROUP BY k"
    catalog.sql(sql).df()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        catalog.sql(sql).df()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=REPO.parent / "shared" / "tasks" / "dev")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    oracle = args.dev / "oracle.jsonl"
    if not oracle.is_file():
        print(f"no {oracle}", file=sys.stderr)
        return 2
    entries = [json.loads(line) for line in oracle.read_text(encoding="utf-8").splitlines() if line.strip()]
    tasks = [args.dev / "input" / e["task_id"] for e in entries]
    sqls = [e["sql"] for e in entries]
    catalogs = open_loaded(tasks)
    # A few oracle queries read tables extracted from documents (a run's prepare step): left out.
    runnable = [i for i, (c, sql) in enumerate(zip(catalogs, sqls)) if _runs(c, sql)]
    for i in set(range(len(tasks))) - set(runnable):
        catalogs[i].close()
    catalogs, sqls = [catalogs[i] for i in runnable], [sqls[i] for i in runnable]
    scratch = tempfile.TemporaryDirectory()
    big = large_catalog(Path(scratch.name), args.rows)
    print(f"{len(sqls)} of {len(tasks)} dev tasks (the rest need extracted tables), {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    results = {}
    for one in (False, True):
        with threads(one):
            reopen([*catalogs, big])
            varying = varying_orders(catalogs, sqls, args.runs)
            dev = min(dev_wall(catalogs, sqls) for _ in range(args.repeat))
            large = large_wall(big, args.repeat)
        results[one] = (varying, dev, large)
        label = "one thread" if one else "default   "
        print(f"{label}: {varying} of {len(sqls)} oracle queries showed their first {SHOWN_ROWS} rows in more than "
              f"one order over {args.runs} runs; dev {dev:.2f} s; {args.rows:,}-row GROUP BY {large:.3f} s")
    print(f"ratios one/default: dev {results[True][1] / results[False][1]:.2f}x, "
          f"large {results[True][2] / results[False][2]:.2f}x")
    for catalog in [*catalogs, big]:
        catalog.close()
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
