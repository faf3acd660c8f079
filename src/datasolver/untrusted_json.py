"""Reading JSON that someone else wrote: traces, run summaries, results files of a received folder.

Such a file may hold anything: a line nested 100,000 deep (json.loads raises RecursionError, not
ValueError), a value nested just under the interpreter's limit (the reader's own recursion then
fails later), a line of gigabytes, or the wrong type where an object is expected. Here each of
those is a `BadJSON` (a ValueError) with a reason a person can read, or a per-line note, never a
traceback. What the values mean is still the caller's to check.

A leaf module (it imports only `errors`).
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from datasolver.errors import DatasolverError

MAX_DEPTH = 100
"""Deepest nesting accepted; the program's own files nest about 12 levels (tool schemas)."""
MAX_LINE_BYTES = 64 << 20
"""Longest JSON line read from a trace (a whole tool result is far below a MiB)."""
MAX_FILE_BYTES = 256 << 20
"""Largest JSON file read whole (a run summary of thousands of tasks is a few MiB)."""


class BadJSON(DatasolverError, ValueError):
    """Text that is not JSON, is nested too deeply, or is too large to read."""


def parse(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `text`; BadJSON (never RecursionError) when it cannot be used."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise BadJSON(f"nested deeper than {max_depth} levels") from None
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise BadJSON(f"not JSON ({exc})") from None
    if _depth_over(value, max_depth):
        raise BadJSON(f"nested deeper than {max_depth} levels")
    return value


def parse_object(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """`parse`, for text that must hold a JSON object."""
    value = parse(text, max_depth=max_depth)
    if not isinstance(value, dict):
        raise BadJSON(f"a JSON {type(value).__name__} where an object belongs")
    return value


def read_json(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """The JSON value of the file `path`. FileNotFoundError when absent; BadJSON when it is a
    link or not a regular file (a FIFO would block), too large, or not usable JSON."""
    path = Path(path)
    with open_regular(path) as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise BadJSON(f"{path} is over {max_bytes} bytes; not read")
    try:
        return parse(data.decode("utf-8-sig", errors="replace"))
    except BadJSON as exc:
        raise BadJSON(f"{path}: {exc}") from None


def read_object(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any]:
    """`read_json`, for a file that must hold a JSON object."""
    value = read_json(path, max_bytes=max_bytes)
    if not isinstance(value, dict):
        raise BadJSON(f"{path} holds a JSON {type(value).__name__}, not an object")
    return value


def object_lines(path: Path, *, max_line_bytes: int | None = None) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """(line number, object or None, note) for each non-blank line of a JSON-lines file.

    A line that is not a JSON object, is nested too deeply or is longer than `max_line_bytes` gives
    None and a note saying why (its bytes are skipped, never held); the lines after it still count.
    FileNotFoundError when it is absent, BadJSON when it is a link or not a regular file."""
    max_line_bytes = MAX_LINE_BYTES if max_line_bytes is None else max_line_bytes
    with open_regular(Path(path)) as fh:
        number = 0
        while True:
            line = fh.readline(max_line_bytes + 1)
            if not line:
                return
            number += 1
            if len(line) > max_line_bytes and not line.endswith(b"\n"):
                while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield number, None, f"line {number}: longer than {max_line_bytes} bytes; skipped"
                continue
            if not line.strip():
                continue
            try:
                yield number, parse_object(line.decode("utf-8", errors="replace")), ""
            except BadJSON as exc:
                yield number, None, f"line {number}: {exc}"


def as_int(value: Any, default: int = 0) -> int:
    """`value` as an int when it is a number or numeric text within ±2**63, else `default`
    (never an exception; a count beyond that range is no count a run wrote)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        number = value if isinstance(value, int) else int(float(value))
    except (ValueError, OverflowError):  # "x", inf, nan
        return default
    return number if abs(number) < 1 << 63 else default


def as_float(value: Any, default: float = 0.0) -> float:
    """`value` as a finite float when it is a number or numeric text, else `default`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return default
    try:
        number = float(value)
    except (ValueError, OverflowError):  # "x", an int past float's range
        return default
    return number if math.isfinite(number) else default


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """`value` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading when it is a regular file itself: a link is refused, not
    followed; a FIFO or device is refused without blocking. FileNotFoundError when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadJSON(f"{path} is a symlink; not followed") from None
        raise BadJSON(f"{path} cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BadJSON(f"{path} is not a regular file; not read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _depth_over(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (iterative: no recursion of its own)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
