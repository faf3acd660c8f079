"""Compressed table files: `x.csv.gz`, `x.tsv.bz2`, `x.json.xz`, `x.jsonl.zst` (what DuckDB and
pandas read), and reading their bytes within a bound.

A compressed file names its format by the suffix under the compression's (`gapminder.csv.gz` is a
CSV file; its table is `gapminder`). Only CSV/TSV and JSON files are read compressed. Their bytes
are never trusted to be small: a few KB of gzip can expand a thousandfold, so every read counts
the decompressed bytes and stops with a note (`SourceSkipped`) past the cap it is given (the
per-file input limit): the memory or scratch disk a compressed file costs is what the same file
uncompressed could cost, never more. Damaged data is a note too, never a traceback.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from datasolver.data.errors import SourceSkipped, SourceStopped
from datasolver.data.input_limits import FILE_ENV
from datasolver.sizes import human_size

COMPRESSIONS = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}
CHUNK = 1 << 20


def compression(path: Path) -> str | None:
    """The compression a file's name says (`gzip`, `bz2`, `xz`, `zstd`), or None."""
    return COMPRESSIONS.get(path.suffix.lower())


def inner_name(path: Path) -> Path:
    """The name without its compression suffix: `x.csv.gz` → `x.csv`; other names unchanged."""
    return path.with_suffix("") if compression(path) else path


def format_suffix(path: Path) -> str:
    """The suffix that names the format, lowercase: `.csv` for `x.CSV.gz` and for `x.csv`."""
    return inner_name(path).suffix.lower()


def table_stem(path: Path) -> str:
    """The file's stem without the compression and format suffixes: `gapminder.csv.gz` → `gapminder`."""
    return inner_name(path).stem


class _Bounded:
    """A decompressing reader that refuses to give more than `cap` bytes in all."""

    def __init__(self, raw: BinaryIO, path: Path, kind: str, cap: int) -> None:
        self._raw, self._path, self._kind, self._cap = raw, path, kind, cap
        self.given = 0

    def read(self, size: int = -1) -> bytes:
        want = self._cap + 1 - self.given if size is None or size < 0 else min(size, self._cap + 1 - self.given)
        try:
            data = self._raw.read(max(want, 1))
        except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:
            raise SourceSkipped(f"not a readable {self._kind} file ({str(exc)[:200] or type(exc).__name__})") from exc
        self.given += len(data)
        if self.given > self._cap:
            raise SourceSkipped(too_large(self._cap))
        return data

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _Bounded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def too_large(cap: int) -> str:
    return (f"not read: it decompresses to more than {human_size(cap)}, the limit per file "
            f"(raise it with {FILE_ENV})")


def open_input(path: Path, cap: int) -> BinaryIO | _Bounded:
    """The file's bytes as a binary reader: decompressed (at most `cap` bytes, else SourceSkipped)
    when its name says it is compressed, the file itself otherwise."""
    kind = compression(path)
    if kind is None:
        return open(path, "rb")
    raw: BinaryIO
    if kind == "gzip":
        raw = gzip.open(path, "rb")
    elif kind == "bz2":
        raw = bz2.open(path, "rb")
    elif kind == "xz":
        raw = lzma.open(path, "rb")
    else:
        raw = _zstd_reader(path)
    return _Bounded(raw, path, kind, cap)


def _zstd_reader(path: Path) -> BinaryIO:
    """Python 3.11 has no zstd; pyarrow (already a dependency) decompresses it as a stream."""
    import pyarrow as pa

    try:
        return pa.CompressedInputStream(pa.OSFile(os.fspath(path)), "zstd")  # type: ignore[return-value]
    except pa.ArrowException as exc:
        raise SourceSkipped(f"not a readable zstd file ({str(exc)[:200]})") from exc


def read_head(path: Path, size: int) -> tuple[bytes, bool]:
    """The first `size` bytes (decompressed) and whether they are the whole content."""
    with open_input(path, size + 1) as fh:
        head = _read_full(fh, size)
        whole = len(head) < size or not _read_full(fh, 1)
    return head, whole


def read_all(path: Path, cap: int) -> bytes:
    """The whole content, decompressed, at most `cap` bytes (else SourceSkipped)."""
    chunks = []
    with open_input(path, cap) as fh:
        while chunk := fh.read(CHUNK):
            chunks.append(chunk)
    return b"".join(chunks)


def decompress_to(path: Path, target: Path, cap: int, stop: Callable[[], bool] = lambda: False) -> int:
    """Write the decompressed content of `path` to a new file `target` (at most `cap` bytes, else
    SourceSkipped and no file); returns its size."""
    try:
        with open_input(path, cap) as fh, open(target, "xb") as out:
            while chunk := fh.read(CHUNK):
                if stop():
                    raise SourceStopped("stopped while decompressing the file")
                out.write(chunk)
            return out.tell()
    except BaseException:
        target.unlink(missing_ok=True)
        raise


def _read_full(fh: BinaryIO | _Bounded, size: int) -> bytes:
    """Read up to `size` bytes (a decompressing stream may return fewer at a time)."""
    parts, got = [], 0
    while got < size:
        chunk = fh.read(size - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)
