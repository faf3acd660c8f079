"""The table cache: each table a catalog loads kept as a DuckDB file outside the input, reused while
the file it came from is unchanged, so a later `sql`, `tables`, `ask` or `mcp` on the same folder
reads no source again.

- root: `--table-cache DIR|off`, else `$DATASOLVER_TABLE_CACHE`, else
  `$XDG_CACHE_HOME/datasolver/tables` or `~/.cache/datasolver/tables` (the rule of every datasolver
  cache, `user_cache.py`). Safe to delete at any time: what is missing is loaded again.
- layout: `<root>/<file key>/<table key>.json` (the record) and `<table key>-<content>.duckdb` (the
  table, named `t`). The file key is the SHA-256 of the source file's resolved path, so a task's
  scratch copy (links to the input's files) shares the input's entries; the table key covers the
  table's name inside the file, the load options (`--encoding`) and the cache format, which names
  the package version and the SHA-256 of the loaders' own source (`LOADER_MODULES`): a new
  loader never reuses an old table, released or not (a loader fix between two releases once left
  the old, wrong table in use).
- identity: the record holds the file's size, mtime and ctime (ns), inode and device, a SHA-256 of
  sampled blocks (the first and last 64 KiB and 16 blocks between, ~1 MiB read) and the SHA-256 of
  the whole file. An entry is reused when all but the last match; when the stat changed but the
  size did not, the whole file is hashed and an equal SHA-256 reuses the entry (a touched or
  re-copied file) and refreshes its record. Anything else is a miss: the table is loaded again.
- writes are atomic: the table is written in a fresh folder beside its record (mkdtemp, 0700),
  renamed into place whole, then the record is written (temp file + rename); older tables of the
  same key are removed. A reader sees a whole entry or none.
- never trusted blindly: every folder and file of an entry must be ours (no link, our uid, writable
  by no one else), the record is bounded JSON of the right version and shape, and the catalog
  checks that the DuckDB file attaches and holds the recorded rows, columns and types; anything
  else is a miss (rebuilt).
- bounded: at most `$DATASOLVER_TABLE_CACHE_MAX` bytes in all (a size: `8G`, `512M`; default
  DEFAULT_MAX_BYTES). Each entry's record is touched when a catalog reuses it, so its time says when
  it was last used; after a table is written, the least recently used entries are removed until the
  cache fits again (never one this process uses; the newest one stays even when it alone is larger).
  A catalog whose cached table another process removed loads it again.
- the sandbox never sees it: only `Catalog.open(..., table_cache=…)` uses it, which the CLI,
  `ask` and `mcp` pass and the generated solver.py does not; a task's scratch keeps its own
  private catalog file (`loaded_file`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from datasolver import __version__
from datasolver.data.errors import DataError, SourceStopped
from datasolver.data.input_limits import parse_size
from datasolver.data.user_cache import cache_root, make_dirs, owned_privately, real_dir, regular_file

CACHE_ENV = "DATASOLVER_TABLE_CACHE"
MAX_ENV = "DATASOLVER_TABLE_CACHE_MAX"
DEFAULT_MAX_BYTES = 8 << 30
"""The cache's size in all, past which the least recently used tables are removed (`$DATASOLVER_TABLE_CACHE_MAX`).
Without it a folder of small hostile files could fill the disk: a 6 KB Parquet file once became a 629 MB entry."""
FORMAT = 1
LOADER_MODULES = ("arrow_columns", "compressed", "csv_source", "encoding", "errors", "excel_source", "files",
                  "infer_types", "input_files", "input_limits", "json_source", "knowledge_file", "layout", "load_notes",
                  "names", "sources", "sqlite_source", "table_load", "title_lines", "typed_files")
"""The data room's modules that turn a file into a table: `sources` and `table_load` and what they
import from the room (tests/test_table_cache.py keeps the list whole); their source is in the key."""
TABLE = "t"
MAX_RECORD_BYTES = 256 << 10
SAMPLE_BLOCK = 64 << 10
SAMPLE_BLOCKS = 16
HASH_CHUNK = 1 << 20

Stop = Callable[[], bool]


@dataclass(frozen=True)
class Identity:
    """What tells one version of a file from another without reading it all."""

    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int
    sample: str

    def same_stat(self, other: Identity) -> bool:
        return self == other


def identity_of(path: Path) -> Identity:
    info = os.stat(path)
    return Identity(info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev,
                    _sample_hash(path, info.st_size))


def _sample_hash(path: Path, size: int) -> str:
    h = hashlib.sha256(str(size).encode())
    with open(path, "rb") as fh:
        offsets = [0, max(0, size - SAMPLE_BLOCK)]
        offsets += [size * i // (SAMPLE_BLOCKS + 1) for i in range(1, SAMPLE_BLOCKS + 1)]
        for offset in offsets:
            fh.seek(offset)
            h.update(fh.read(SAMPLE_BLOCK if offset in (0, max(0, size - SAMPLE_BLOCK)) else 4096))
    return h.hexdigest()


def file_sha256(path: Path, stop: Stop = lambda: False) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            if stop():
                raise SourceStopped("stopped while hashing the file")
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class CachedTable:
    """A table the cache holds: its DuckDB file (the table is `t` in it), its shape and notes."""

    db: Path
    rows: int
    columns: list[tuple[str, str]]
    notes: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class PendingEntry:
    """A table being written into the cache: load it into `db` (a fresh file), then `commit`."""

    cache: TableCache
    folder: Path
    key: str
    record: dict
    db: Path
    _tmp: Path

    def commit(self, rows: int, columns: list[tuple[str, str]], notes: list[tuple[str, str]],
               stop: Stop = lambda: False) -> CachedTable:
        """Put the written table into place with its record; returns where it now is. When the source
        changed during the load, the entry is recorded without its SHA-256 (so it is never reused
        for other content)."""
        source = Path(self.record["path"])
        before = self.record["identity"]
        try:
            after = identity_of(source)
            digest = file_sha256(source, stop) if _as_dict(after) == before else None
            if digest is not None and _as_dict(identity_of(source)) != before:
                digest = None
        except OSError:
            digest = None
        final = self.folder / f"{self.key}-{(digest or os.urandom(8).hex())[:16]}.duckdb"
        os.replace(self.db, final)
        shutil.rmtree(self._tmp, ignore_errors=True)
        record = dict(self.record, sha256=digest, db=final.name, rows=rows, columns=[list(c) for c in columns],
                      notes=[list(n) for n in notes])
        self.cache._write_record(self.folder, self.key, record)
        for old in self.folder.glob(f"{self.key}-*.duckdb"):
            if old.name != final.name:
                old.unlink(missing_ok=True)
        self.cache.in_use.add(final)
        self.cache.make_room(_file_size(final))
        return CachedTable(final, rows, list(columns), list(notes))

    def abort(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)


@functools.cache
def cache_version() -> str:
    """What an entry must have been written by: the package version, the cache format, and the
    SHA-256 of the loaders' source files (read once per process, ~150 KB)."""
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for name in LOADER_MODULES:
        h.update(name.encode() + b"\0")
        try:
            h.update((here / f"{name}.py").read_bytes())
        except OSError:  # an install without the sources: the package version alone tells
            h.update(b"\0unreadable")
    return f"datasolver {__version__} table cache {FORMAT} loaders {h.hexdigest()[:16]}"


class TableCache:
    """The cache under `root` (see the module docstring)."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes_from_env() if max_bytes is None else max_bytes
        self.notes: list[str] = []  # why the cache could not be used, once each
        self.in_use: set[Path] = set()  # tables this process reuses or wrote: never removed by it
        self._used: int | None = None  # the cache's bytes as last counted (None: not counted yet)

    @classmethod
    def from_setting(cls, setting: str | Path | None = None) -> TableCache | None:
        """The cache for `--table-cache` (None: `$DATASOLVER_TABLE_CACHE`, then the user cache
        folder); None for `off`."""
        root = cache_root("tables", CACHE_ENV, setting)
        return cls(root) if root is not None else None

    # ------------------------------------------------------------------ reading
    def lookup(self, path: Path, table: str, options: str = "") -> CachedTable | None:
        """The cached table of `table` in the file at `path` when it is still that file's (else None)."""
        try:
            source = Path(os.path.realpath(path))
            folder, key = self._where(source, table, options)
            record = self._read_record(folder, key)
            if record is None or record.get("path") != str(source) or record.get("table") != table \
                    or record.get("options") != options:
                return None
            db = folder / str(record.get("db", ""))
            if "/" in str(record.get("db", "")) or not regular_file(db) or not owned_privately(db):
                return None
            now = identity_of(source)
            if _as_dict(now) != record.get("identity"):
                if record.get("identity", {}).get("size") != now.size or not record.get("sha256") \
                        or file_sha256(source) != record["sha256"]:
                    return None
                self._write_record(folder, key, dict(record, identity=_as_dict(now)))
            else:
                os.utime(folder / f"{key}.json", follow_symlinks=False)  # last used: now (see make_room)
            self.in_use.add(db)
            return CachedTable(db, int(record["rows"]), [(str(c), str(t)) for c, t in record["columns"]],
                               [(str(k), str(t)) for k, t in record.get("notes", [])])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def forget(self, cached: CachedTable) -> None:
        """Remove an entry whose DuckDB file proved unusable (it is rebuilt on the next load)."""
        if owned_privately(cached.db):
            cached.db.unlink(missing_ok=True)

    # ------------------------------------------------------------------ writing
    def begin(self, path: Path, table: str, options: str = "") -> PendingEntry | None:
        """A fresh place to write `table` of the file at `path`; None (with a note in `notes`) when
        the cache cannot be written."""
        try:
            source = Path(os.path.realpath(path))
            folder, key = self._where(source, table, options)
            identity = identity_of(source)
            make_dirs(self.root)
            make_dirs(folder)
            if not (owned_privately(self.root) and owned_privately(folder)):
                raise PermissionError(f"{folder} is not a folder only this user may write")
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder))
        except OSError as exc:
            note = f"table cache {self.root} is not usable ({exc}); tables are loaded into a temporary file"
            if note not in self.notes:
                self.notes.append(note)
            return None
        record = {"version": cache_version(), "path": str(source), "table": table, "options": options,
                  "identity": _as_dict(identity)}
        return PendingEntry(self, folder, key, record, tmp / "table.duckdb", tmp)

    # ------------------------------------------------------------------ size
    def make_room(self, added: int = 0) -> None:
        """After `added` bytes were written: when the cache is over `max_bytes`, remove its least
        recently used entries (by their record's time) until it fits, never one in `in_use`. The
        cache is counted once per TableCache and then kept up to date; a failure to count or remove
        is ignored (the cache is a convenience)."""
        try:
            if self._used is None:
                self._used = sum(entry.size for entry in self._entries())
            else:
                self._used += added
            if self._used <= self.max_bytes:
                return
            entries = sorted(self._entries(), key=lambda entry: entry.last_used)
            total = sum(entry.size for entry in entries)
            for entry in entries:
                if total <= self.max_bytes:
                    break
                if any(f in self.in_use for f in entry.files):
                    continue
                for path in entry.files:
                    path.unlink(missing_ok=True)
                total -= entry.size
                with contextlib.suppress(OSError):
                    entry.files[0].parent.rmdir()  # its file's folder, once empty
            self._used = total
        except OSError:
            self._used = None

    def _entries(self) -> list[_Stored]:
        """Every entry under the root (a record and its tables, or a table left without a record),
        with its size and when it was last used; only files and folders that are ours."""
        if real_dir(self.root) is not True or not owned_privately(self.root):
            return []
        found = []
        for folder in self.root.iterdir():
            if folder.name.startswith(".") or real_dir(folder) is not True or not owned_privately(folder):
                continue
            tables: dict[str, list[Path]] = {}
            records: dict[str, Path] = {}
            for path in folder.iterdir():
                if path.name.startswith(".tmp-") or not regular_file(path) or not owned_privately(path):
                    continue  # a table being written, or not ours
                if path.suffix == ".json":
                    records[path.stem] = path
                elif path.suffix == ".duckdb":
                    tables.setdefault(path.name.rsplit("-", 1)[0], []).append(path)
            for key in records.keys() | tables.keys():
                files = tables.get(key, []) + ([records[key]] if key in records else [])
                infos = [f.lstat() for f in files]
                last_used = records[key].lstat().st_mtime if key in records else max(i.st_mtime for i in infos)
                found.append(_Stored(files, sum(i.st_size for i in infos), last_used))
        return found

    # ------------------------------------------------------------------ internals
    def _where(self, source: Path, table: str, options: str) -> tuple[Path, str]:
        file_key = hashlib.sha256(str(source).encode("utf-8", "surrogateescape")).hexdigest()[:32]
        table_key = hashlib.sha256(f"{cache_version()}\0{table}\0{options}".encode("utf-8", "surrogateescape")).hexdigest()[:24]
        return self.root / file_key, table_key

    def _read_record(self, folder: Path, key: str) -> dict | None:
        path = folder / f"{key}.json"
        if real_dir(self.root) is not True or real_dir(folder) is not True:
            return None
        if not (owned_privately(self.root) and owned_privately(folder) and regular_file(path) and owned_privately(path)):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_RECORD_BYTES + 1)
        if len(raw) > MAX_RECORD_BYTES:
            return None
        record = json.loads(raw.decode("utf-8"))
        if not isinstance(record, dict) or record.get("version") != cache_version():
            return None
        return record

    def _write_record(self, folder: Path, key: str, record: dict) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh, ensure_ascii=False)
            os.replace(tmp, folder / f"{key}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


@dataclass(frozen=True)
class _Stored:
    """One entry as the cache's size sees it: its files (tables first, then the record), bytes, last use."""

    files: list[Path]
    size: int
    last_used: float


def max_bytes_from_env(environ: dict[str, str] | None = None) -> int:
    """The cache's size cap: `$DATASOLVER_TABLE_CACHE_MAX` (a size: bytes, or 512M, 8G), else DEFAULT_MAX_BYTES."""
    value = (os.environ if environ is None else environ).get(MAX_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(value)
    except DataError as exc:
        raise DataError(f"{MAX_ENV}: {exc}") from exc


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _as_dict(identity: Identity) -> dict:
    return {"size": identity.size, "mtime_ns": identity.mtime_ns, "ctime_ns": identity.ctime_ns,
            "inode": identity.inode, "device": identity.device, "sample": identity.sample}
