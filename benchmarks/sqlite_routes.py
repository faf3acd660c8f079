"""SQLite → DuckDB: the engine's route (Python sqlite3 → Arrow → typed DuckDB table) against
DuckDB's sqlite_scanner extension (only usable offline as duckdb 1.5.5 + the PyPI wheel
`duckdb-extension-sqlite-scanner==1.5.5`, in a separate virtualenv).

    python benchmarks/sqlite_routes.py [--rows 200000] [--scanner-python /path/to/venv/bin/python]

Each route runs in its own subprocess on the same generated file; one run, one machine: read
the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

OURS = """
import json, sys, time
from datasolver.data import Catalog
t = time.perf_counter()
with Catalog.open(sys.argv[1]) as cat:
    cat.load(["t"])
    types = [r[1] for r in cat.query("DESCRIBE t", limit=50).rows]
print(json.dumps({"seconds": time.perf_counter() - t, "types": types}))
"""

SCANNER = """
import json, sys, time, pathlib
import duckdb, duckdb_extension_sqlite_scanner as pkg
ext = next(pathlib.Path(pkg.__file__).parent.rglob("sqlite_scanner.duckdb_extension"))
t = time.perf_counter()
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False,
                             "allow_unsigned_extensions": True})
con.execute(f"LOAD '{ext}'")
con.execute("SET sqlite_all_varchar = false")
con.execute(f"ATTACH '{sys.argv[1]}/db/w.db' AS s (TYPE sqlite, READ_ONLY)")
con.execute("CREATE TABLE t AS SELECT * FROM s.t")
types = [r[1] for r in con.execute("DESCRIBE t").fetchall()]
print(json.dumps({"seconds": time.perf_counter() - t, "types": types, "duckdb": duckdb.__version__}))
"""


def generate(root: Path, rows: int) -> None:
    (root / "db").mkdir(parents=True)
    conn = sqlite3.connect(root / "db" / "w.db")
    conn.execute("CREATE TABLE t (a INTEGER, b TEXT, c REAL, d TEXT, e INTEGER, f TEXT, g REAL, h TEXT, i, j TEXT)")
    rng = random.Random(1)
    conn.executemany(
        "INSERT INTO t VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(n, f"s{n % 100}", rng.random(), "2024-01-02", n * 3, "x", rng.random() * 100, f"{n:06d}",
          n % 7 if n % 5 else "mixed", "中文") for n in range(rows)],
    )
    conn.commit()
    conn.close()


def run(python: str, code: str, root: Path) -> dict:
    out = subprocess.run([python, "-c", code, str(root)], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--scanner-python", help="python of a venv with duckdb==1.5.5 and the scanner wheel")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root, args.rows)
        ours = run(sys.executable, OURS, root)
        print(f"engine route (sqlite3 → Arrow → typed table), {args.rows} rows × 10 cols: {ours['seconds']:.2f}s")
        print(f"  types: {ours['types']}")
        if args.scanner_python:
            scanner = run(args.scanner_python, SCANNER, root)
            print(f"sqlite_scanner route (duckdb {scanner['duckdb']}): {scanner['seconds']:.2f}s")
            print(f"  types: {scanner['types']}")
            print(f"ratio engine / scanner: {ours['seconds'] / scanner['seconds']:.1f}")


if __name__ == "__main__":
    main()
