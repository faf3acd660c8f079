"""DuckDB's settings for a catalog's connections: no extension install or autoload, a scratch
database without fsync, one query thread, this process's memory and temp-space share, and file
access confined to the files a connection must read (`confine`), its settings then locked."""

from __future__ import annotations

import functools
import os
import resource
import shutil
import tempfile
from pathlib import Path

import duckdb

from datasolver.data.errors import DataError
from datasolver.data.guard import locked_connection_config

# Every connection starts with no extension install or autoload; file access is then limited to the
# files it must read (`confine`): the loader reads the sources DuckDB scans itself and the scratch
# folder, the query connection only the files of tables it scans before they are loaded.
OPEN_CONFIG = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
# The database is a scratch copy, removed with the catalog: a crash loses nothing worth an fsync
# at each loader checkpoint (the 40-task dev oracle run, one task at a time: ~10-20% less wall time).
SCRATCH_DATABASE = {"fsync_mode": "NONE"}
# Under an address-space rlimit (the solver sandbox) DuckDB's default of 80% of RAM would hit the
# rlimit and fail instead of spilling to disk; keep DuckDB well inside it.
MEMORY_SHARE_OF_RLIMIT = 0.5
# Queries run on one thread: DuckDB's parallel aggregates, joins and sorts with ties give rows back
# in whichever order the threads finish, so a query without ORDER BY would show the model other
# first rows on each run and a replay would diverge on them (8 of 32 dev oracle queries on 2
# cores). Tasks run in parallel anyway; loading stays multi-threaded. benchmarks/query_threads.py
# measures both sides.
ONE_ORDER = {"threads": 1}


# Outside a sandbox DuckDB would take 80% of RAM and 90% of the free disk per catalog, and a batch
# opens one catalog per task at once: each gets a share sized for several (an eighth of the RAM,
# 1-4 GiB; spilling beyond it goes to temp files, at most an eighth of the free disk, 1-16 GiB).
CATALOGS_AT_ONCE = 8
MEMORY_BOUNDS = (1 << 30, 4 << 30)
TEMP_BOUNDS = (1 << 30, 16 << 30)


@functools.cache
def memory_config() -> dict[str, str]:
    """DuckDB's memory and temp-space caps for this process (the same for every connection of it:
    DuckDB refuses a second connection to one file with other settings)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft > 0:  # the solver sandbox: keep well inside the rlimit
        memory = int(soft * MEMORY_SHARE_OF_RLIMIT)
    else:
        memory = _clamp(_physical_memory() // CATALOGS_AT_ONCE, MEMORY_BOUNDS)
    temp = _clamp(shutil.disk_usage(tempfile.gettempdir()).free // CATALOGS_AT_ONCE, TEMP_BOUNDS)
    return {"memory_limit": f"{max(64, memory >> 20)}MB", "max_temp_directory_size": f"{temp >> 20}MB"}


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(bounds[1], value))


def confine(conn: duckdb.DuckDBPyConnection, paths: list[Path], folders: list[Path], progress: bool = False) -> None:
    """Limit a connection's file access to `paths` and `folders` (none: no file access at all),
    then lock its settings. `progress` lets `query_progress()` say how far a long statement is.
    A second connection to a database already confined (settings are the database's) keeps them."""
    if conn.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        if conn.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]:
            raise DataError("a catalog database is open elsewhere in this process with file access on")
        return
    if paths:
        conn.execute("SET allowed_paths = ?", [[os.fspath(p) for p in paths]])
    if folders:
        conn.execute("SET allowed_directories = ?", [[os.fspath(f) for f in folders]])
    conn.execute("SET enable_external_access = false")
    # DuckDB's own bar would print on our stdout (in the middle of `sql`'s rows) for any statement
    # over ~2 s, a query on cached tables included: never printed, only read by query_progress().
    conn.execute("SET enable_progress_bar_print = false")
    if progress:
        conn.execute("SET enable_progress_bar = true")
    conn.execute("SET lock_configuration = true")


def connection_config(base: dict) -> dict:
    """`base` with the scratch database's and this process's memory settings. Connections to one
    file open at once in one process must share their settings, or DuckDB refuses the second: a
    catalog never holds its loader and reader together, and a second catalog on `loaded_file()`
    opens it as a reader."""
    return {**base, **SCRATCH_DATABASE, **memory_config()}


def reader_config() -> dict:
    """The query connection's settings at open; `confine` then turns file access off and locks
    them (after attaching the cached tables' files, which a locked connection cannot)."""
    locked = {k: v for k, v in locked_connection_config().items()
              if k not in ("enable_external_access", "lock_configuration")}
    return {**connection_config(locked), **ONE_ORDER}
