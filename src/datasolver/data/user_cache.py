"""Where datasolver keeps what it computed from an input folder, outside that folder.

One rule for every such cache (the document tables, the loaded tables): the root is the
setting's value (a folder, or `off`/`none` for no cache), else the cache's environment variable,
else `$XDG_CACHE_HOME/datasolver/<kind>`, else `~/.cache/datasolver/<kind>`. The cache's own folders are
made 0700 and are never followed through a link: a folder that is a link, or not ours, is not
used (the caller works without the cache, with a note).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

NO_CACHE = ("off", "none")


def cache_root(kind: str, env: str, setting: str | Path | None = None) -> Path | None:
    """The cache root for `setting` (a folder, `off`/`none`, or None for `$env` and then the user
    cache folder's `datasolver/<kind>`); None means no cache."""
    value = str(setting) if setting is not None else os.environ.get(env, "")
    if value.strip().lower() in NO_CACHE:
        return None
    if value.strip():
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "datasolver" / kind


def real_dir(path: Path) -> bool | None:
    """True for a directory, None when absent, False for anything else (a link, a file)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    return stat.S_ISDIR(mode) or False


def regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def make_dirs(path: Path) -> None:
    """Create the cache folders (0700); an existing link among them raises instead of being followed."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if real_dir(path) is not True:
        raise NotADirectoryError(f"{path} is not a plain folder; a datasolver cache does not follow links")


def owned_privately(path: Path) -> bool:
    """A file or folder that is no link, belongs to this user and that no one else may write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
        return False
    return not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
