"""A big CSV beside DuckDB itself: `datasolver sql`'s first query, the next invocation, MCP, Ctrl-C.

Generates a 1,704,000-row CSV (~140 MB: ids, country names, continents, years, ISO dates, decimals,
populations, three-letter codes and 5-digit codes with leading zeros), then runs, each in its own
process, on the same file and query:

- DuckDB itself: `SELECT … FROM read_csv('big.csv')` (its own sniffer, nothing kept), and beside it
  `datasolver sql` with an empty table cache: when the answer is printed, and when the command
  exits; `--cold-rounds` pairs, alternating (a file of 16 MiB or more goes into the table cache in a
  detached child after the answer: when that child is done is measured too, before the next row
  starts; in the first round a query run at once, while the child still fills the cache, too);
- `datasolver sql` again on the unchanged folder (the table cache answers);
- `datasolver sql --table-cache off` (the file read straight each time, nothing kept);
- the whole table exported: DuckDB's own `COPY … TO` beside `datasolver sql --csv FILE` and a piped
  `datasolver sql --format csv` (both with the table cache filled);
- the same query over MCP (`build_server`, default --query-timeout) with an empty table cache;
- `datasolver tables` (a load of the whole table) stopped by SIGINT two seconds in (a load that ends sooner shows exit 0).

Wall time, CPU seconds (user + system, all threads) and peak memory (max RSS) of each process
come from `os.wait4`. All figures come from one run on one machine: compare the rows, not runs.

    python benchmarks/big_csv.py [--rows 1704000] [--cold-rounds 3] [--work benchmarks/_work]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

QUERY = "SELECT continent, count(*) AS n, avg(lifeExp) AS life FROM {table} GROUP BY 1 ORDER BY 1"


def generate(folder: Path, rows: int) -> Path:
    """The CSV, made by DuckDB from hashes of the row number (the same bytes on every machine)."""
    import duckdb

    path = folder / "big.csv"
    stamp = folder / "rows.txt"
    if path.is_file() and stamp.is_file() and stamp.read_text() == str(rows):
        return path
    folder.mkdir(parents=True, exist_ok=True)
    duckdb.sql(f"""
        COPY (
          SELECT i AS id,
                 'Country ' || lpad((i % 142)::VARCHAR, 3, '0') AS country,
                 ['Africa', 'Americas', 'Asia', 'Europe', 'Oceania'][i % 5 + 1] AS continent,
                 1952 + 5 * ((i // 142) % 12) AS year,
                 strftime(make_date(1952 + 5 * ((i // 142) % 12), 1 + i % 12, 1 + i % 28), '%Y-%m-%d') AS day,
                 printf('%.3f', 30 + (hash(i, 1) % 50000) / 1000.0) AS lifeExp,
                 60000 + hash(i, 2) % 1300000000 AS pop,
                 printf('%.6f', (hash(i, 3) % 50000000000) / 1000000.0) AS gdpPercap,
                 chr((65 + (i % 142) % 26)::INTEGER) || chr((65 + ((i % 142) // 26) % 26)::INTEGER) || chr((65 + i % 7)::INTEGER) AS iso_alpha,
                 (i % 142) * 4 + 4 AS iso_num,
                 lpad((hash(i, 4) % 100000)::VARCHAR, 5, '0') AS code
          FROM range({rows}) t(i)
        ) TO '{path}' (HEADER, DELIMITER ',')
    """)
    stamp.write_text(str(rows))
    return path


def measured(argv: list[str], **kwargs) -> dict:
    """Run one process: its wall time, when its first line of output came, its exit code, CPU and
    peak memory (its own rusage: the child is reaped here, by os.wait4)."""
    start = time.perf_counter()
    # A shell's background job starts with SIGINT ignored, and a child inherits that: restore it.
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=kwargs.get("env"),
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = None
    signalled = None
    if kwargs.get("signal_after_s") is not None:
        time.sleep(kwargs["signal_after_s"])
        signalled = time.perf_counter()
        os.kill(process.pid, signal.SIGINT)  # not send_signal: its poll() would reap a process already done
    else:
        if process.stdout.readline():
            first = time.perf_counter() - start
    process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    done = time.perf_counter()
    result = {"started": start, "wall_s": done - start, "answer_s": first, "code": os.waitstatus_to_exitcode(status),
              "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
              "stderr": err.decode(errors="replace").strip()[-300:]}
    if signalled is not None:
        result["after_signal_s"] = done - signalled
    return result


MCP_CHILD = """
import asyncio, sys, time
from mcp import Client
from datasolver.data import TableCache
from datasolver.mcp_server import build_server
start = time.perf_counter()
with build_server(sys.argv[1], table_cache=TableCache(sys.argv[2])) as server:
    async def main():
        async with Client(server.mcp) as client:
            result = await client.call_tool("query", {"sql": sys.argv[3]})
            text = "".join(block.text for block in result.content)
            print("error" if result.is_error else "ok", round(time.perf_counter() - start, 2), text.replace(chr(10), " | "),
                  flush=True)
    asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_704_000)
    parser.add_argument("--cold-rounds", type=int, default=3,
                        help="how many times DuckDB and the cold first query run side by side")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / "_work" / "big_csv")
    args = parser.parse_args()
    folder = args.work / "data"
    started = time.perf_counter()
    path = generate(folder, args.rows)
    print(f"{path}: {args.rows:,} rows, {path.stat().st_size / 1e6:.0f} MB (made in {time.perf_counter() - started:.1f} s); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    query = QUERY.format(table="big")
    cache = args.work / "cache"
    env = dict(os.environ, DATASOLVER_TABLE_CACHE=str(cache))
    py = sys.executable
    duck = [py, "-c", "import duckdb, sys; print(duckdb.sql(sys.argv[1]).fetchall())",
            QUERY.format(table=f"read_csv('{path}')")]
    sql = [py, "-m", "datasolver", "sql", str(folder), query]
    rows = []

    def row(label: str, result: dict) -> None:
        rows.append((label, result))
        answer = f"{result['answer_s']:.2f}" if result.get("answer_s") else "-"
        extra = f"  exit {result['code']}" + (f", {result['after_signal_s']:.2f} s after SIGINT"
                                              if "after_signal_s" in result else "")
        print(f"{label:<46} answer {answer:>6} s  wall {result['wall_s']:6.2f} s  cpu {result['cpu_s']:6.2f} s  "
              f"peak {result['peak_mb']:5.0f} MB{extra}", flush=True)

    for round_ in range(1, args.cold_rounds + 1):  # DuckDB and the cold first query side by side, alternating
        shutil.rmtree(cache, ignore_errors=True)
        row(f"duckdb read_csv (round {round_})", measured(duck))
        first = measured(sql, env=env)
        row(f"datasolver sql, first, empty table cache ({round_})", first)
        filler = re.search(r"in the background \(pid (\d+)\)", first["stderr"])
        if filler and round_ == 1:  # a query at once, while the cache is being filled: it reads the file again
            row("datasolver sql at once (fill still running)", measured(sql, env=env))
        if filler:  # the detached child that fills the cache: when it ends (it is not ours to reap)
            while Path(f"/proc/{filler.group(1)}").exists():
                time.sleep(0.05)
            print(f"{'  its background cache fill done':<46} at {time.perf_counter() - first['started']:6.2f} s "
                  f"after the command started", flush=True)
    row("datasolver sql, next invocation (cached)", measured(sql, env=env))
    row("datasolver sql, next invocation again", measured(sql, env=env))
    row("datasolver sql --table-cache off", measured([*sql[:4], "--table-cache", "off", *sql[4:]], env=env))
    row("duckdb read_csv (again)", measured(duck))
    # The whole table exported: DuckDB's COPY beside `sql --csv FILE` (table cache warm) and a piped --format csv.
    copy = [py, "-c", "import duckdb, sys; duckdb.sql(sys.argv[1])",
            f"COPY (SELECT * FROM read_csv('{path}')) TO '{args.work / 'copy.csv'}' (HEADER)"]
    row("duckdb COPY TO csv (whole table)", measured(copy))
    row("datasolver sql --csv FILE (whole table)", measured([*sql[:5], "--csv", str(args.work / "out.csv"),
                                                            "SELECT * FROM big"], env=env))
    row("datasolver sql --format csv | (whole table)", measured([*sql[:5], "--format", "csv", "SELECT * FROM big"],
                                                                env=env))
    shutil.rmtree(cache, ignore_errors=True)
    mcp = subprocess.run([py, "-c", MCP_CHILD, str(folder), str(args.work / "mcp-cache"), query],
                         capture_output=True, text=True, env=env)
    shutil.rmtree(args.work / "mcp-cache", ignore_errors=True)
    print(f"MCP query, default --query-timeout, empty cache: {mcp.stdout.strip() or mcp.stderr.strip()[-300:]}")
    shutil.rmtree(cache, ignore_errors=True)
    row("datasolver tables, SIGINT 2 s in (loading)", measured([py, "-m", "datasolver", "tables", str(folder)],
                                                                env=env, signal_after_s=2.0))
    print(json.dumps({label: {k: v for k, v in r.items() if k not in ("stderr", "started")} for label, r in rows}))


if __name__ == "__main__":
    main()
