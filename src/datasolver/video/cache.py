"""The video pass's cache: results keyed by the file's SHA-256 and the pass's options.

A second pass over the same bytes copies the cached frames and timeline instead of decoding,
reading and transcribing again. The folder is $DATASOLVER_CACHE_DIR/video, else
$XDG_CACHE_HOME/datasolver/video, else ~/.cache/datasolver/video; when it cannot be written the
pass simply runs uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

ENV_CACHE = "DATASOLVER_CACHE_DIR"
TIMELINE = "timeline.json"


def default_cache_dir() -> Path:
    if os.environ.get(ENV_CACHE):
        return Path(os.environ[ENV_CACHE]) / "video"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "datasolver" / "video"


def file_digest(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def cache_key(digest: str, options: dict[str, object]) -> str:
    salt = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:12]
    return f"{digest[:32]}-{salt}"


def lookup(cache_dir: Path | None, key: str) -> Path | None:
    """The cached entry's folder when complete, else None."""
    if cache_dir is None:
        return None
    entry = cache_dir / key
    return entry if (entry / TIMELINE).is_file() else None


def store(cache_dir: Path | None, key: str, timeline: dict[str, object], frames: list[Path]) -> None:
    """Write an entry (frames then timeline, so a half-written one is never found); errors ignored."""
    if cache_dir is None:
        return
    entry = cache_dir / key
    try:
        tmp = cache_dir / f".{key}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for frame in frames:
            shutil.copyfile(frame, tmp / frame.name)
        (tmp / TIMELINE).write_text(json.dumps(timeline, ensure_ascii=False), encoding="utf-8")
        shutil.rmtree(entry, ignore_errors=True)
        tmp.replace(entry)
    except OSError:
        shutil.rmtree(cache_dir / f".{key}.tmp{os.getpid()}", ignore_errors=True)
