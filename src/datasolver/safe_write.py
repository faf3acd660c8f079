"""Writing into folders this program does not own outright, never through a link.

A received logs folder, a downloaded task's derived/, an output folder or a report's folder may
hold a symlink (or a FIFO) where a file or a folder is expected. Every write the program makes
there goes through this module, and so:

- walks from the folder the caller named (`base`: taken as given, created when missing) down to
  the file's folder one component at a time, each opened O_DIRECTORY | O_NOFOLLOW relative to the
  previous one: a link (or a file) in that chain is refused with `UnsafeWrite`, never followed,
  and a `..` or an absolute part can never lead out of `base`;
- replaces a file through a new file with an unpredictable name, created O_EXCL | O_NOFOLLOW in
  that folder and renamed over the target: a rename replaces a symlink, it never writes through
  one, and a reader never sees half a file;
- appends (traces) with O_APPEND | O_NOFOLLOW | O_NONBLOCK, and only to a regular file.

A leaf module (it imports only `errors`), so every room can write the same way.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from datasolver.errors import DatasolverError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
NAME_MAX = 255
"""Bytes in one file name on Linux file systems (ext4, xfs, btrfs, tmpfs)."""
SIBLING_ROOM = 16
"""Bytes `fit_name` leaves free by default, for a sibling such as `<stem>.provenance.csv`."""
_APPEND_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeWrite(DatasolverError, OSError):
    """A folder on the way to a file is a link or not a folder, or the file is not a regular one:
    the write is refused rather than sent somewhere else. (An OSError too, so code that handles a
    failed write handles this one.)"""


@contextlib.contextmanager
def folder(path: Path, *, base: Path | None = None, create: bool = True) -> Iterator[int]:
    """A descriptor of the folder `path` (made when missing, unless `create` is False); every
    component below `base` must be a real folder (default `base`: `path` itself, taken as given)."""
    path = Path(path)
    base = path if base is None else Path(base)
    parts = _parts_below(path, base)
    if create:
        os.makedirs(base, exist_ok=True)
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        reached = base
        for part in parts:
            reached = reached / part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafeWrite(f"{reached} is a symlink or not a folder; refusing to write through it "
                                      f"(remove it, or choose another folder)") from exc
                raise
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def make_folders(path: Path, *, base: Path) -> Path:
    """Make `path` below `base` (a link on the way is refused); return it."""
    with folder(path, base=base):
        return Path(path)


@contextlib.contextmanager
def replacing(path: Path, *, base: Path | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces `path` in one step when the block ends without an error.

    `base` is the folder the caller named (default: the file's own folder); see `folder`.
    """
    path = Path(path)
    with folder(path.parent, base=path.parent if base is None else base) as dir_fd:
        tmp = f".{path.name[:32]}.{secrets.token_hex(8)}.tmp"
        fd = os.open(tmp, _NEW_FLAGS, 0o666, dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                yield fh
            os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise


def write_file(path: Path, data: str | bytes, *, base: Path | None = None) -> Path:
    """Replace `path` with `data` (text is written as UTF-8) in one step; return `path`."""
    with replacing(path, base=base) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)


@contextlib.contextmanager
def replacing_text(path: Path, *, base: Path | None = None, newline: str | None = "") -> Iterator[io.TextIOWrapper]:
    """`replacing` as UTF-8 text (for csv and json writers)."""
    with replacing(path, base=base) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline=newline)
        try:
            yield text
        finally:
            text.flush()
            text.detach()


def append_text(path: Path, text: str, *, base: Path | None = None) -> None:
    """Append `text` (UTF-8) to the regular file `path`, made when missing; a link, FIFO or
    device there is refused."""
    path = Path(path)
    with folder(path.parent, base=path.parent if base is None else base) as dir_fd:
        try:
            fd = os.open(path.name, _APPEND_FLAGS, 0o666, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeWrite(f"{path} is a symlink; refusing to write through it") from exc
            if exc.errno == errno.ENXIO:  # a FIFO nobody reads (O_NONBLOCK: no hang)
                raise UnsafeWrite(f"{path} is not a regular file; refusing to write to it") from exc
            raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UnsafeWrite(f"{path} is not a regular file; refusing to write to it")
        os.set_blocking(fd, True)
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
    finally:
        os.close(fd)


def remove(path: Path, *, base: Path | None = None) -> None:
    """Delete the entry `path` when present (a link itself, never its target; a folder with
    everything in it, links inside removed, never followed)."""
    path = Path(path)
    try:
        with folder(path.parent, base=path.parent if base is None else base, create=False) as dir_fd:
            try:
                os.unlink(path.name, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                shutil.rmtree(path.name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass


def fit_name(stem: str, suffix: str = "", *, room: int = SIBLING_ROOM) -> str:
    """`stem + suffix`, with the stem cut (whole UTF-8 characters) so the name, plus `room` bytes
    for a sibling's longer suffix, fits a file system's NAME_MAX; a cut name ends in `~` and 8 hex
    digits of the whole stem's hash, so two long names never meet."""
    limit = NAME_MAX - room - len(suffix.encode("utf-8"))
    if len(stem.encode("utf-8")) <= limit:
        return stem + suffix
    digest = hashlib.sha256(stem.encode("utf-8")).hexdigest()[:8]
    cut = stem.encode("utf-8")[: limit - 9].decode("utf-8", errors="ignore")
    return f"{cut}~{digest}{suffix}"


def is_one_name(name: str) -> bool:
    """Whether `name` names one entry inside a folder (for names read from files someone else
    wrote: no `/`, not empty, `.` or `..`, no NUL)."""
    return name not in ("", ".", "..") and "/" not in name and "\x00" not in name


def _parts_below(path: Path, base: Path) -> tuple[str, ...]:
    """The components of `path` below `base`; a `..` or a path outside `base` is refused."""
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        raise UnsafeWrite(f"{path} is not inside {base}; refusing to write there") from None
    if not all(is_one_name(part) for part in parts):
        raise UnsafeWrite(f"{path} leads out of {base} ('..'); refusing to write there")
    return parts
