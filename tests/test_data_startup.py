"""What `datasolver sql` imports on a folder the table cache already holds (issue 32: a second
invocation on an unchanged 1.7M-row CSV within 1 s).

The cache answers with DuckDB alone: the readers of source files (pyarrow, numpy), the SQL
transpiler (sqlglot, for another dialect's SQL only) and the documents pass (PDF reader, sandbox)
are not needed, and their imports were ~0.8 of the ~1.5 CPU-s such an invocation took. Each command
runs in its own process here; the modules it imported are printed at exit.

Before: every `sql` imported all of them (pyarrow, sqlglot, numpy and datasolver.documents.prepare).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.datafiles import write_task

RUNNER = """
import atexit, json, sys
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr))
from datasolver.cli import main
sys.argv = ["datasolver", *sys.argv[1:]]
main()
"""
HEAVY = ("pyarrow", "numpy", "pandas", "sqlglot", "datasolver.documents.prepare", "datasolver.sandbox",
         "datasolver.llm")
ROWS = "continent,lifeExp\n" + "".join(f"{c},{50 + i}\n" for i, c in enumerate(["Asia", "Europe", "Asia"] * 20))


def _sql(folder: Path, cache: Path, query: str) -> tuple[str, str, set[str]]:
    """(stdout, stderr without the module list, modules imported) of one `datasolver sql` process."""
    env = {k: v for k, v in os.environ.items() if k != "DATASOLVER_TABLE_CACHE"}
    done = subprocess.run([sys.executable, "-c", RUNNER, "sql", "--table-cache", str(cache), str(folder), query],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    modules = next(json.loads(line[len("MODULES "):]) for line in lines if line.startswith("MODULES "))
    rest = "\n".join(line for line in lines if not line.startswith("MODULES "))
    return done.stdout, rest, set(modules)


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.partition(".")[0] in HEAVY or m in HEAVY
                  or any(m.startswith(h + ".") for h in HEAVY))


def test_a_query_on_a_cached_folder_imports_no_reader_transpiler_or_documents_pass(tmp_path):
    folder = write_task(tmp_path, files={"csv/big.csv": ROWS})
    cache = tmp_path / "cache"
    query = "SELECT continent, count(*) AS n FROM big GROUP BY 1 ORDER BY 1"
    first, _, _ = _sql(folder, cache, query)  # reads the file, then loads it into the cache
    assert first == "continent\tn\nAsia\t40\nEurope\t20\n"
    second, err, modules = _sql(folder, cache, query)
    assert second == first and err == ""
    assert "duckdb" in modules
    assert _heavy(modules) == []


def test_another_dialects_sql_on_a_cached_folder_is_still_repaired(tmp_path):
    folder = write_task(tmp_path, files={"csv/big.csv": ROWS})
    cache = tmp_path / "cache"
    _sql(folder, cache, "SELECT count(*) FROM big")
    out, err, modules = _sql(folder, cache, "SELECT TOP 1 continent FROM big ORDER BY continent")  # T-SQL
    assert out == "continent\nAsia\n"
    assert "note: SQL rewritten before it ran:" in err, err
    assert "sqlglot" in modules  # loaded for the repair, and only then


def test_a_changed_file_is_read_again_without_the_cache(tmp_path):
    folder = write_task(tmp_path, files={"csv/big.csv": ROWS})
    cache = tmp_path / "cache"
    query = "SELECT count(*) FROM big"
    assert _sql(folder, cache, query)[0] == "count_star()\n60\n"
    (folder / "context" / "csv" / "big.csv").write_text(ROWS + "Africa,40\n", encoding="utf-8")
    assert _sql(folder, cache, query)[0] == "count_star()\n61\n"
    assert _sql(folder, cache, query)[0] == "count_star()\n61\n"


def test_a_first_query_read_straight_from_a_csv_imports_no_arrow(tmp_path):
    """The first answer over a UTF-8 CSV read straight from its file: the sample that types its
    columns stays in DuckDB (before: an Arrow table, whose pyarrow import was ~0.3 s of the ~1.2 s
    between DuckDB's own read_csv and `datasolver sql`'s first answer on the 1.7M-row file)."""
    folder = write_task(tmp_path, files={"csv/big.csv": ROWS})
    out, err, modules = _sql(folder, Path("off"), "SELECT continent, avg(lifeExp) AS life FROM big GROUP BY 1 ORDER BY 1")
    assert out == "continent\tlife\nAsia\t79.5\nEurope\t79.5\n", out
    assert err == ""
    assert [m for m in _heavy(modules) if m.partition(".")[0] in ("pyarrow", "numpy", "pandas")] == []
