"""Data-layer benchmark: lazy registration vs eager loading, peak memory, exploration latency.

Generates a package of 20 tables (2M rows in all by default) over CSV, JSON and SQLite: one
1M-row CSV plus 19 smaller tables. Each measurement runs in its own subprocess so peak memory
(ru_maxrss) is that measurement's alone. All numbers come from one run on one machine; report
ratios, not absolute times.

    python benchmarks/data_layer.py [--rows 2000000] [--work benchmarks/_work]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIG_ROWS_SHARE = 0.5
N_TABLES = 20
CATEGORIES = ["北京", "上海", "广州", "深圳", "杭州", "南京", "武汉", "成都"]


def generate(root: Path, total_rows: int) -> Path:
    task = root / "task_bench"
    ctx = task / "context"
    if (task / "task.json").exists() and json.loads((task / "task.json").read_text())["rows"] == total_rows:
        return task
    for sub in ("csv", "json", "db"):
        (ctx / sub).mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    big = int(total_rows * BIG_ROWS_SHARE)
    small = (total_rows - big) // (N_TABLES - 1)

    def rows(n: int, offset: int = 0):
        for i in range(n):
            yield (i + offset, f"{rng.randrange(100000):06d}", CATEGORIES[i % len(CATEGORIES)],
                   round(rng.random() * 1000, 2), f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", rng.randrange(1000))

    header = ["id", "code", "city", "amount", "day", "qty"]
    with open(ctx / "csv" / "big_sales.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows(big))
    db = sqlite3.connect(ctx / "db" / "warehouse.db")
    for t in range(1, N_TABLES):
        kind = ("csv", "json", "db")[t % 3]
        name = f"table_{t:02d}"
        data = list(rows(small, t * 1_000_000))
        if kind == "csv":
            with open(ctx / "csv" / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(header)
                writer.writerows(data)
        elif kind == "json":
            records = [dict(zip(header, r)) for r in data]
            (ctx / "json" / f"{name}.json").write_text(
                json.dumps({"table": name, "records": records}, ensure_ascii=False), encoding="utf-8")
        else:
            db.execute(f"CREATE TABLE {name} (id INTEGER, code TEXT, city TEXT, amount REAL, day TEXT, qty INTEGER)")
            db.executemany(f"INSERT INTO {name} VALUES (?,?,?,?,?,?)", data)
    db.commit()
    db.close()
    (task / "task.json").write_text(json.dumps({"question": "bench", "rows": total_rows}), encoding="utf-8")
    return task


def _child(mode: str, task: str) -> None:
    """Runs inside a subprocess; prints one JSON line of measurements."""
    from datasolver.data import Catalog

    out: dict = {}
    t0 = time.perf_counter()
    cat = Catalog.open(task)
    if mode == "lazy":
        cat.query("SELECT city, sum(amount) FROM table_01 GROUP BY city", limit=50)
    elif mode == "eager":
        cat.load()
    elif mode == "latency":
        cat.load(["big_sales"])
        out["load_big_s"] = time.perf_counter() - t0
        queries = [
            "SELECT city, count(*), avg(amount) FROM big_sales GROUP BY city ORDER BY city",
            "SELECT * FROM big_sales WHERE code = '000123'",
            "SELECT day, sum(qty) FROM big_sales WHERE amount > 500 GROUP BY day ORDER BY 2 DESC",
            "SELECT count(DISTINCT code) FROM big_sales",
            "SELECT * FROM big_sales ORDER BY amount DESC LIMIT 10",
        ]
        times = []
        for _ in range(6):
            for q in queries:
                s = time.perf_counter()
                cat.query(q, limit=50)
                times.append(time.perf_counter() - s)
        out["p50_ms"] = statistics.median(times) * 1000
        out["p90_ms"] = sorted(times)[int(len(times) * 0.9)] * 1000
    out["seconds"] = time.perf_counter() - t0
    out["tables"] = len(cat.names())
    cat.close()
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def _measure(mode: str, task: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(task)], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000, help="total rows over the 20 tables")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / "_work")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    t0 = time.perf_counter()
    task = generate(args.work, args.rows)
    print(f"package: {task} ({args.rows} rows, {N_TABLES} tables; generated in {time.perf_counter() - t0:.1f}s)")
    lazy, eager, latency = _measure("lazy", task), _measure("eager", task), _measure("latency", task)
    print(f"register + one query on one table: {lazy['seconds']:.2f}s, peak {lazy['peak_rss_mb']:.0f} MB")
    print(f"eager load of all {eager['tables']} tables:   {eager['seconds']:.2f}s, peak {eager['peak_rss_mb']:.0f} MB")
    print(f"ratio lazy/eager: {lazy['seconds'] / eager['seconds']:.3f} (target <= 0.1)")
    print(f"1M-row table: load {latency['load_big_s']:.2f}s; exploration query p50 {latency['p50_ms']:.1f} ms, "
          f"p90 {latency['p90_ms']:.1f} ms (target p50 <= 50 ms)")


if __name__ == "__main__":
    main()
