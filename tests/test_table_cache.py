"""The table cache (issue 32, item 4): a later command on the same unchanged files reads no source
again; a changed file is read again; the cache is our own file and never trusted blindly.

Before: nothing was kept between invocations: every `sql` on a 136 MB CSV loaded it again (25-40 s).
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.data import Catalog, TableCache
from tests.helpers.datafiles import write_task

ROWS = "n,label\n" + "".join(f"{i},x{i}\n" for i in range(50))


def _open(folder: Path, cache_root: Path, **options) -> Catalog:
    return Catalog.open(folder, table_cache=TableCache(cache_root), **options)


def test_a_second_command_reads_the_cache_not_the_files(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS, "csv/r.csv": "a,b\n1,2\n3\n"})
    cache = ["--table-cache", str(tmp_path / "cache")]
    first = CliRunner().invoke(cli, ["tables", *cache, str(folder)])
    assert first.exit_code == 0 and "from the table cache" not in first.output
    second = CliRunner().invoke(cli, ["tables", *cache, str(folder)])
    assert second.exit_code == 0
    assert f"note: 2 of 2 table(s) read from the table cache ({tmp_path / 'cache'}), not from their files" \
        in second.output
    # The notes of a load are kept with its table: the cached one still says what the load skipped.
    assert "note: csv/r.csv: 1 row(s) with the wrong number of fields not loaded" in second.output
    query = CliRunner().invoke(cli, ["sql", *cache, str(folder), "SELECT count(*) FROM r"])
    assert query.exit_code == 0 and "1 row(s) with the wrong number of fields not loaded" in query.output


def test_a_changed_file_is_read_again(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]
    (folder / "context" / "csv" / "t.csv").write_text(ROWS + "50,x50\n", encoding="utf-8")
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.reused_tables() == []
        assert catalog.query("SELECT count(*) FROM t").rows == [(51,)]
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.reused_tables() == ["t"]
        assert catalog.query("SELECT count(*) FROM t").rows == [(51,)]


def test_a_touched_file_with_the_same_bytes_is_reused(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    with _open(folder, tmp_path / "cache") as catalog:
        catalog.load()
    path = folder / "context" / "csv" / "t.csv"
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.reused_tables() == ["t"]  # its whole-file SHA-256 matched
        assert catalog.query("SELECT max(n) FROM t").rows == [(49,)]


def test_a_damaged_or_foreign_cache_file_is_not_trusted(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    cache = tmp_path / "cache"
    with _open(folder, cache) as catalog:
        catalog.load()
    [db] = cache.rglob("*.duckdb")
    db.write_bytes(b"not a database")
    with _open(folder, cache) as catalog:
        assert catalog.reused_tables() == []
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]
    [record] = cache.rglob("*.json")
    os.chmod(record, 0o666)  # writable by anyone: not ours alone any more
    with _open(folder, cache) as catalog:
        assert catalog.reused_tables() == []
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]


def test_a_link_in_the_cache_is_never_followed(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").symlink_to(elsewhere)
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]
        assert any("table cache" in n.path and "not usable" in n.reason for n in catalog.notes)
    assert list(elsewhere.iterdir()) == []


def test_a_query_reads_a_csv_straight_and_persist_caches_it(tmp_path):
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    with _open(folder, tmp_path / "cache", scan_before_load=True) as catalog:
        assert catalog.query("SELECT sum(n) FROM t").rows == [(1225,)]
        assert catalog.tables()[0].loaded is False  # read straight from the file
        catalog.persist()
        assert catalog.tables()[0].loaded is True
    with _open(folder, tmp_path / "cache", scan_before_load=True) as catalog:
        assert catalog.reused_tables() == ["t"]


def test_a_straight_read_that_meets_what_its_sample_did_not_show_loads_the_careful_way(tmp_path):
    # The sample (the first 5,000 rows) says BIGINT and 2 fields; the last rows say otherwise.
    body = "".join(f"{i},{i}\n" for i in range(6000))
    folder = write_task(tmp_path, files={"csv/late.csv": "a,b\n" + body + "6000,7.5\n",
                                         "csv/ragged.csv": "a,b\n" + body + "6000\n"})
    with _open(folder, tmp_path / "cache", scan_before_load=True) as catalog:
        assert catalog.query("SELECT typeof(b), b FROM late WHERE a = 6000").rows == [("DOUBLE", 7.5)]
        assert catalog.query("SELECT count(*) FROM ragged").rows == [(6000,)]
        assert [n.reason for n in catalog.load_notes(["ragged"])] == [
            "1 row(s) with the wrong number of fields not loaded (line 6002: 1 fields, expected 2)"]


def test_without_a_cache_argument_no_cache_is_written(tmp_path, monkeypatch):
    # The sandboxed solver.py opens the catalog without one: the variable alone never turns it on.
    monkeypatch.setenv("DATASOLVER_TABLE_CACHE", str(tmp_path / "cache"))
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    with Catalog.open(folder) as catalog:
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]
        assert catalog.loaded_file() is not None
    assert not (tmp_path / "cache").exists()


def test_off_loads_into_a_temporary_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DATASOLVER_TABLE_CACHE", str(tmp_path / "cache"))
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    result = CliRunner().invoke(cli, ["sql", "--table-cache", "off", str(folder), "SELECT count(*) FROM t"])
    assert result.exit_code == 0 and result.stdout == "count_star()\n50\n"
    assert not (tmp_path / "cache").exists()


def test_sql_that_lists_the_catalog_names_its_tables_whether_read_straight_or_cached(tmp_path):
    # A table read straight from its file is a temp view, a cached one a view over an attached file's
    # `t`: DuckDB's own listings would show those. SHOW TABLES and information_schema list the catalog.
    folder = write_task(tmp_path, files={"csv/t.csv": ROWS, "csv/u.csv": "k\n1\n"})
    cache = ["--table-cache", str(tmp_path / "cache")]
    listing = "SELECT table_name, table_type FROM information_schema.tables ORDER BY 1"
    for _ in ("empty cache", "cached"):
        shown = CliRunner().invoke(cli, ["sql", *cache, str(folder), "SHOW TABLES"])
        assert shown.exit_code == 0 and shown.stdout == "name\nt\nu\n", shown.output
        schema = CliRunner().invoke(cli, ["sql", *cache, str(folder), listing])
        assert schema.stdout.splitlines() == ["table_name\ttable_type", "df_t\tVIEW", "df_u\tVIEW",
                                              "t\tBASE TABLE", "u\tBASE TABLE"], schema.output
        described = CliRunner().invoke(cli, ["sql", *cache, str(folder), "DESCRIBE t"])
        assert described.stdout.splitlines()[1:] == ["n\tBIGINT\tYES\t\\N\t\\N\t\\N",
                                                     "label\tVARCHAR\tYES\t\\N\t\\N\t\\N"], described.output
    assert any((tmp_path / "cache").iterdir())


def test_an_entry_of_other_loaders_is_loaded_again(tmp_path, monkeypatch):
    """The key names the loaders' own source, not only the package version: a loader fixed between
    two releases (the multi-line header fix of issue 32) once kept serving the old, wrong table."""
    from datasolver.data import table_cache

    folder = write_task(tmp_path, files={"csv/t.csv": ROWS})
    with _open(folder, tmp_path / "cache") as catalog:
        catalog.load()
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.reused_tables() == ["t"]
    monkeypatch.setattr(table_cache, "cache_version", lambda: "datasolver x table cache 1 loaders changed")
    with _open(folder, tmp_path / "cache") as catalog:
        assert catalog.reused_tables() == []
        assert catalog.query("SELECT count(*) FROM t").rows == [(50,)]


def test_the_loader_list_holds_every_module_a_load_runs():
    """Every module of the data room that `sources` / `table_load` reach through their imports is
    hashed into the key: a new loader module left off the list would serve stale tables."""
    import ast

    from datasolver.data import table_cache

    room = Path(table_cache.__file__).parent

    def imports(name: str) -> set[str]:
        found = set()
        for node in ast.walk(ast.parse((room / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("datasolver.data."):
                found.add(node.module.split(".")[2])
            elif isinstance(node, ast.ImportFrom) and node.module == "datasolver.data":
                found.update(a.name for a in node.names if (room / f"{a.name}.py").is_file())
        return found

    reached, todo = set(), ["sources", "table_load"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(imports(name))
    assert reached <= set(table_cache.LOADER_MODULES), sorted(reached - set(table_cache.LOADER_MODULES))
    assert table_cache.cache_version().startswith("datasolver ") and " loaders " in table_cache.cache_version()


def test_every_table_of_a_load_is_written_by_one_loader_connection(tmp_path, monkeypatch):
    # Before: a DuckDB instance per table (~20 ms of CPU each, most of a small table's load); now one
    # loader attaches each table's fresh file in turn. Each file holds its one table, small blocks.
    import duckdb

    files = {f"csv/t{i}.csv": ROWS for i in range(4)} | {"csv/bad.csv": "a,b\n1,2\n3\n"}
    folder = write_task(tmp_path, files=files)
    opened, real_connect = [], duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *args, **kwargs: opened.append(args[0]) or real_connect(*args, **kwargs))
    with _open(folder, tmp_path / "cache") as catalog:
        catalog.load()
        assert opened == [":memory:"]
        assert catalog.reused_tables() == []
    monkeypatch.setattr(duckdb, "connect", real_connect)
    files = sorted((tmp_path / "cache").rglob("*.duckdb"))
    assert len(files) == 5 and all(f.stat().st_size < 100_000 for f in files)
    with _open(folder, tmp_path / "cache") as catalog:
        assert sorted(catalog.reused_tables()) == ["bad", "t0", "t1", "t2", "t3"]
        assert catalog.query("SELECT count(*) FROM t3").rows == [(50,)]
        assert catalog.query("SELECT count(*) FROM bad").rows == [(1,)]


def test_the_tables_a_query_reads_straight_are_probed_on_one_connection(tmp_path, monkeypatch):
    # Before: a DuckDB instance per table read straight (~20 ms of CPU each); persist then loads
    # them all on one more.
    import duckdb

    folder = write_task(tmp_path, files={f"csv/t{i}.csv": ROWS for i in range(3)})
    opened, real_connect = [], duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *args, **kwargs: opened.append(args[0]) or real_connect(*args, **kwargs))
    with _open(folder, tmp_path / "cache", scan_before_load=True) as catalog:
        sql = "SELECT sum(t0.n + t1.n + t2.n) FROM t0 JOIN t1 USING (n) JOIN t2 USING (n)"
        assert catalog.query(sql).rows == [(3 * 1225,)]
        assert [info.loaded for info in catalog.tables()] == [False, False, False]  # read straight
        probes = [path for path in opened if path == ":memory:"]
        assert len(probes) == 1, opened
        catalog.persist()
        assert [path for path in opened if path == ":memory:"] == [":memory:"] * 2, opened
        assert [info.loaded for info in catalog.tables()] == [True, True, True]
        assert catalog.query(sql).rows == [(3 * 1225,)]


def _records(cache_root: Path) -> dict[str, dict]:
    """The table cache's records by the name of the file each keeps a table of."""
    import json

    records = (json.loads(p.read_text()) for p in cache_root.glob("*/*.json"))
    return {Path(record["path"]).name: record for record in records}


def _wait_gone(pid: int, limit_s: float = 180.0) -> bool:
    import time

    deadline = time.monotonic() + limit_s
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not Path(f"/proc/{pid}").exists()


def test_a_big_file_read_straight_goes_into_the_cache_after_the_command_exits(tmp_path):
    # Issue 45 item 3. Before: `sql` printed the rows, then loaded the whole file into the cache
    # while the shell waited (13.6 s against DuckDB's ~3 s for a 1.7M-row CSV). Now a file of 16 MiB
    # or more goes into the cache in a detached process; a small one is still cached before exit.
    # First the fill's lock is held here, so no child can start: the command itself must then leave
    # the big file uncached (deterministic, whatever the child's speed); then, lock released, the
    # next command starts the child that fills it.
    import fcntl
    import re
    import subprocess
    import sys

    import duckdb

    from datasolver.data.cache_fill import FillJob

    folder = write_task(tmp_path, files={"csv/small.csv": ROWS})
    big = folder / "context" / "csv" / "big.csv"
    duckdb.sql(f"COPY (SELECT i AS a, i % 7 AS b, 'label ' || i AS c FROM range(800000) t(i)) TO '{big}' (HEADER)")
    assert big.stat().st_size >= 16 << 20
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    env = dict(os.environ, DATASOLVER_TABLE_CACHE=str(cache))
    query = [sys.executable, "-m", "datasolver", "sql", str(folder),
             "SELECT (SELECT count(*) FROM big) AS big, (SELECT sum(n) FROM small) AS small"]
    lock = (cache / FillJob(str(folder.resolve()), str(cache), ["big"]).lock_name()).open("w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        first = subprocess.run(query, capture_output=True, text=True, env=env, timeout=300)
    finally:
        lock.close()
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[1:] == ["800000\t1225"]
    assert re.search(r"note: big \(csv/big\.csv, [\d.]+ MB\) goes into the table cache by another datasolver "
                     r"process; until then a query reads the file", first.stderr), first.stderr
    records = _records(cache)
    assert "small.csv" in records and "big.csv" not in records
    second = subprocess.run(query, capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    found = re.search(r"note: big \(csv/big\.csv, [\d.]+ MB\) goes into the table cache in the background "
                      r"\(pid (\d+)\); until then a query reads the file", second.stderr)
    assert found, second.stderr
    assert _wait_gone(int(found.group(1)))
    assert _records(cache)["big.csv"]["rows"] == 800000
    third = subprocess.run([sys.executable, "-m", "datasolver", "tables", str(folder)],
                           capture_output=True, text=True, env=env, timeout=300)
    assert third.returncode == 0, third.stderr
    assert f"note: 2 of 2 table(s) read from the table cache ({cache}), not from their files" in third.stdout + third.stderr


def test_the_background_fill_loads_with_the_commands_header_row(tmp_path):
    # The detached child opens the folder with the command's own options: a big file whose header
    # `--header-row` placed below title lines is cached as the command read it, so the next command
    # with the same option reads it from the cache (before, the child loaded it without the option,
    # under another key, and the next command read the file again).
    import re
    import subprocess
    import sys

    import duckdb

    folder = write_task(tmp_path, files={"csv/small.csv": ROWS})
    body = tmp_path / "body.csv"
    duckdb.sql(f"COPY (SELECT i AS a, i % 7 AS b, 'label ' || i AS c FROM range(800000) t(i)) TO '{body}' (HEADER)")
    big = folder / "context" / "csv" / "big.csv"
    big.write_bytes(b"Exported by a tool\n\n" + body.read_bytes())
    cache = tmp_path / "cache"
    env = dict(os.environ, DATASOLVER_TABLE_CACHE=str(cache))
    first = subprocess.run([sys.executable, "-m", "datasolver", "sql", str(folder), "--header-row", "3",
                            "SELECT count(*) AS n, max(a) AS top FROM big"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[1:] == ["800000\t799999"]
    found = re.search(r"goes into the table cache in the background \(pid (\d+)\)", first.stderr)
    assert found, first.stderr
    assert _wait_gone(int(found.group(1)))
    second = subprocess.run([sys.executable, "-m", "datasolver", "sql", str(folder), "--header-row", "3",
                             "SELECT count(*) AS n, max(a) AS top FROM big"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[1:] == ["800000\t799999"]
    assert "goes into the table cache" not in second.stderr, second.stderr  # read from the cache this time
