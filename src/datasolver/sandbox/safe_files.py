"""File access for paths the sandbox can write (workdir/, tmp/): never follow, never block.

A sandboxed program (solver.py, a model-written normalizer) may replace anything beneath its writable folders with a symlink, a FIFO or a huge
file between two runs. The parent process therefore opens such paths only through these
functions: relative to a directory file descriptor, with O_NOFOLLOW (a symlink is refused, not
followed) and O_NONBLOCK (a FIFO cannot block the open), a check that the result is a regular
file, and a cap on what is read. Writes go to a fresh file with an unpredictable name created
with O_EXCL and are renamed over the target; a rename replaces a symlink, it never writes
through one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from datasolver import safe_write
from datasolver.sandbox.errors import UnsafeFile

DEFAULT_READ_CAP = 16 << 20  # solver.py and its pristine copy are a few KiB

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@contextlib.contextmanager
def directory(path: Path) -> Iterator[int]:
    """A file descriptor of the folder `path`; its last component must not be a symlink."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafeFile(f"{path} is not a real folder (a symlink or a file); refusing to use it") from exc
        raise
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_regular(path: Path, *, max_bytes: int | None = None) -> Iterator[BinaryIO]:
    """Open `path` for reading only if it is a regular file (not a symlink, FIFO or device).

    Raises FileNotFoundError when it is absent, UnsafeFile when it is something else or larger
    than `max_bytes`.
    """
    path = Path(path)
    with directory(path.parent) as dir_fd:
        try:
            fd = os.open(path.name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile(f"{path.name} is a symlink; refusing to follow it") from exc
            raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path.name} is not a regular file; refusing to read it")
        if max_bytes is not None and info.st_size > max_bytes:
            raise UnsafeFile(f"{path.name} is {info.st_size} bytes, over the {max_bytes}-byte limit")
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        yield fh


def read_bytes(path: Path, *, max_bytes: int = DEFAULT_READ_CAP) -> bytes:
    """The contents of the regular file `path`, at most `max_bytes` (UnsafeFile beyond)."""
    with open_regular(path, max_bytes=max_bytes) as fh:
        data = fh.read(max_bytes + 1)  # the file may grow after the size check
    if len(data) > max_bytes:
        raise UnsafeFile(f"{Path(path).name} grew over the {max_bytes}-byte limit while being read")
    return data


def read_tail(path: Path, *, max_bytes: int) -> tuple[bytes, bool]:
    """The last `max_bytes` bytes of the regular file `path` (never followed, never blocking), and
    whether that is less than the whole file."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            fh.seek(size - max_bytes)
        return fh.read(max_bytes), size > max_bytes


def read_text(path: Path, *, max_bytes: int = DEFAULT_READ_CAP, errors: str = "strict") -> str:
    return read_bytes(path, max_bytes=max_bytes).decode("utf-8", errors=errors)


def is_regular(path: Path) -> bool:
    """True when `path` itself (not what a symlink points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` in one step, never through a link: the one temp-file-and-rename of
    `safe_write`, walking from the grandparent so a linked parent folder is refused too."""
    path = Path(path)
    safe_write.write_file(path, data, base=path.parent.parent)


def remove(path: Path) -> None:
    """Delete the directory entry `path` if present (a symlink itself, never its target)."""
    path = Path(path)
    with directory(path.parent) as dir_fd:
        try:
            os.unlink(path.name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(path)  # fd-based walk: symlinks inside are removed, never followed
