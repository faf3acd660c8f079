"""What may leave the task folder: the one check every input file passes before anything reads it.

A downloaded task is untrusted: `knowledge.md -> ~/.aws/credentials` or `csv/users.csv ->
/proc/self/environ` would put files from outside the task into prompts and traces, a FIFO blocks
the first `open`, and two folder links `a -> .`, `b -> .` make a link-following walk exponential.
So a file is read only when it resolves inside the task folder and is a regular file; procfs,
sysfs and devices never, whatever the flag. Links that lead outside are refused with a per-file
note unless the user opts in (`--follow-outside-links`, i.e. `DATASOLVER_FOLLOW_OUTSIDE_LINKS=1`).

A task scratch folder made by `prepare` holds links into its input task folder, which prepare
names in `prepared.json`. A scratch link `context/X` is accepted when it mirrors a file the input
passes the same check for: it resolves to exactly what `<input>/context/X` resolves to, and the
input's own scope accepts that. So a forged `prepared.json` (a downloaded folder dressed up as a
scratch) reaches only files some task folder's check accepts, never one outside every task. The
rule reads no file of the input (only resolves paths), so the sandboxed solver.py, which may read
just the linked files, decides exactly as its parent did.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from datasolver import safe_write
from datasolver.data.layout import ScratchLayout, TaskFolder

FOLLOW_OUTSIDE_ENV = "DATASOLVER_FOLLOW_OUTSIDE_LINKS"
FOLLOW_OUTSIDE_FLAG = "--follow-outside-links"
# prepared.json (ScratchLayout.prepared_record), beside task.json in a scratch folder, written by
# `prepare`: it marks the folder as one the program made (so its derived/ is ours), names the input
# task folder and the context files prepare refused, so the scratch's catalog (the brief, the tools,
# `tables`) still says so. A forged one adds notes, lets a derived/ be read (whose entries stay bare
# names of regular files inside it) and names an input whose own check still decides (see InputScope).
MAX_ENTRIES = 100_000  # files and folders one walk lists before it stops with a note
MAX_RECORD_BYTES = 1 << 20
_SYSTEM_ROOTS = ("/proc", "/sys", "/dev")
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def outside_links_allowed() -> bool:
    """Whether the user opted in to links that leave the task folder (the flag sets the variable)."""
    return os.environ.get(FOLLOW_OUTSIDE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def outside_links_env() -> dict[str, str]:
    """The variable for a child process (the sandboxed solver.py) so it decides as its parent did."""
    return {FOLLOW_OUTSIDE_ENV: "1"} if outside_links_allowed() else {}


class InputScope:
    """Where the files of one task may resolve to; `refusal(path)` says why one may not be read."""

    def __init__(self, task_dir: Path, follow_outside: bool | None = None) -> None:
        self.root = Path(os.path.realpath(task_dir))
        self.follow_outside = outside_links_allowed() if follow_outside is None else follow_outside
        self._input = _recorded_input(self.root)
        self._input_scope: InputScope | None = None

    def refusal(self, path: Path) -> str | None:
        """None when `path` may be read: a regular file inside the task; else the note saying why not.

        Nothing is opened: `stat` follows the links, `realpath` says where they lead.
        """
        try:
            info = os.stat(path)
        except OSError as exc:
            return f"not read: {exc.strerror or exc} (a broken link?)"
        real = Path(os.path.realpath(path))
        if _is_system(real):
            return "not read: it links to a system file (procfs, sysfs or a device), which is never read"
        if not stat.S_ISREG(info.st_mode):
            return f"not read: it is {_kind(info.st_mode)}, not a regular file"
        if self._mirrors_input(Path(path), real):
            return None
        return self.folder_refusal(real.parent, what="a file")

    def folder_refusal(self, real_folder: Path, what: str = "a folder") -> str | None:
        """None when a resolved folder lies inside the task (or the user opted in)."""
        if _is_system(real_folder):
            return f"not read: it links to {what} in procfs, sysfs or /dev, which is never read"
        if real_folder == self.root or self.root in real_folder.parents or self.follow_outside:
            return None
        return (f"not read: it is a link to {what} outside the task folder; "
                f"pass {FOLLOW_OUTSIDE_FLAG} to read such links")

    def _mirrors_input(self, path: Path, real: Path) -> bool:
        """Whether a scratch's `context/X` resolves as its input's `context/X`, which the input accepts."""
        if self._input is None:
            return False
        try:  # prepare makes real folders: the link's folder resolves inside the scratch's context/
            rel = Path(os.path.realpath(path.parent)).relative_to(TaskFolder(self.root).context) / path.name
        except ValueError:
            return False
        mirror = TaskFolder(self._input).context / rel
        if Path(os.path.realpath(mirror)) != real:
            return False
        if self._input_scope is None:
            self._input_scope = InputScope(self._input, self.follow_outside)
            self._input_scope._input = None  # one hop: an input is never itself read as a scratch
        return self._input_scope.refusal(mirror) is None


def _recorded_input(root: Path) -> Path | None:
    """The input task folder `prepare` recorded for a scratch folder (resolved), or None."""
    record = _read_record(root)
    value = record.get("input") if record else None
    if not isinstance(value, str) or not value:
        return None
    folder = Path(os.path.realpath(value))
    return None if _is_system(folder) or folder == root else folder


def _is_system(real: Path) -> bool:
    text = str(real)
    return any(text == root or text.startswith(root + "/") for root in _SYSTEM_ROOTS)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@dataclass(frozen=True)
class CappedRead:
    """The first bytes of a file, and how large the file is."""

    data: bytes
    size: int

    @property
    def cut(self) -> bool:
        """Whether the file holds more than was read."""
        return self.size > len(self.data)


def read_capped(path: Path, max_bytes: int) -> CappedRead:
    """At most `max_bytes` of a regular file (a file the input check accepted: a link is followed).

    Opened non-blocking, so a FIFO swapped in after the check never blocks; a FIFO, device or folder
    raises OSError; a sparse 3 GiB file costs `max_bytes`, not 3 GiB.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path}: not read: it is {_kind(info.st_mode)}, not a regular file")
        chunks, left = [], max_bytes
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    return CappedRead(b"".join(chunks), info.st_size)


@dataclass
class InputWalk:
    """The files under a folder that may be read (paths as seen under it), and those refused, why."""

    files: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)


def walk_inputs(folder: Path, scope: InputScope | None = None, max_entries: int = MAX_ENTRIES) -> InputWalk:
    """Every file under `folder` that `scope` accepts, in no particular order, without loops.

    A link to a folder is entered only when it resolves inside the task, and every real folder
    is entered once (two `a -> .` links cost two notes, not an exponential walk); the walk stops
    after `max_entries` entries with a note. Nothing is opened but folders.
    """
    folder = Path(folder)
    scope = scope or InputScope(TaskFolder.of_context(folder).root)
    walk = InputWalk()
    try:
        seen = {_identity(os.stat(folder))}
    except OSError:
        return walk
    pending, count = [folder], 0
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            walk.refused.append((current, f"not read: the folder could not be listed ({exc.strerror or exc})"))
            continue
        for entry in entries:
            count += 1
            if count > max_entries:
                walk.refused.append((folder, f"not read past {max_entries} entries: the folder holds more "
                                             "(a link loop or an unusually large tree)"))
                return walk
            path = Path(entry.path)
            if _is_folder(entry):
                reason = _folder_refusal(entry, scope, seen)
                if reason:
                    walk.refused.append((path, reason))
                else:
                    pending.append(path)
            elif entry.is_symlink():
                if reason := scope.refusal(path):
                    walk.refused.append((path, reason))
                else:
                    walk.files.append(path)
            elif entry.is_file(follow_symlinks=False):
                walk.files.append(path)
            else:
                walk.refused.append((path, f"not read: it is {_entry_kind(entry)}, not a regular file"))
    return walk


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _folder_refusal(entry: os.DirEntry[str], scope: InputScope, seen: set[tuple[int, int]]) -> str | None:
    """Why a folder (or a link to one) is not entered; None when it is, and then it counts as seen."""
    try:
        info = entry.stat()
    except OSError as exc:
        return f"not read: {exc.strerror or exc}"
    if entry.is_symlink() and (reason := scope.folder_refusal(Path(os.path.realpath(entry.path)))):
        return reason
    if _identity(info) in seen:
        return "not read again: it is a link to a folder already listed"
    seen.add(_identity(info))
    return None


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _entry_kind(entry: os.DirEntry[str]) -> str:
    try:
        return _kind(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return "not a regular file"


def write_prepared_record(task_dir: Path, refused: list[tuple[str, str]], input_dir: Path) -> None:
    """Mark `task_dir` as a scratch folder `prepare` made from `input_dir`, naming the context files
    it refused. Written through a new O_EXCL file renamed into place: a planted link is replaced,
    never followed."""
    record = {"input": str(Path(input_dir).resolve()), "refused": [list(i) for i in refused]}
    safe_write.write_file(ScratchLayout(Path(task_dir)).prepared_record, _record_text(record), base=Path(task_dir))


def mark_prepared(task_dir: Path) -> None:
    """Record that the program writes derived/ here, unless a record exists (it keeps prepare's)."""
    try:
        _write_new(ScratchLayout(Path(task_dir)).prepared_record, {"refused": []})
    except FileExistsError:
        pass


def _write_new(path: Path, record: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(_record_text(record))


def _record_text(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1)


def read_prepared_record(task_dir: Path) -> list[tuple[str, str]] | None:
    """The refused files `prepare` recorded, as (relative path, reason); None when `task_dir` holds
    no record, i.e. was not made by the program (a shipped derived/ beside it is then not ours)."""
    record = _read_record(Path(task_dir))
    if record is None:
        return None
    items = record.get("refused", [])
    if not isinstance(items, list):
        return []
    return [(str(i[0])[:300], str(i[1])[:300]) for i in items[:1000] if isinstance(i, list) and len(i) == 2]


def _read_record(task_dir: Path) -> dict | None:
    """prepared.json as a dict ({} when damaged); None when there is none (or it is not a regular file)."""
    try:
        fd = os.open(ScratchLayout(task_dir).prepared_record, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        raw = os.read(fd, MAX_RECORD_BYTES)
    finally:
        os.close(fd)
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}
