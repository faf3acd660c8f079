"""Structurizer results cached by (document hash, model, knowledge hash)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from datasolver import safe_write
from datasolver.documents.structurize.result import Structured

# Bump when prompts or the algorithm change meaningfully, so stale results are not reused.
CACHE_VERSION = "1"


def cache_key(document_sha256: str, model: str, knowledge: str | None) -> str:
    knowledge_sha = hashlib.sha256((knowledge or "").encode("utf-8")).hexdigest()
    raw = "\n".join([CACHE_VERSION, document_sha256, model, knowledge_sha])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


def load_cached(cache_dir: Path, key: str) -> Structured | None:
    path = Path(cache_dir) / f"{key}.json"
    try:
        return Structured(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None  # missing or stale-shaped: recompute


def save_cached(cache_dir: Path, key: str, value: Structured) -> None:
    safe_write.write_file(Path(cache_dir) / f"{key}.json", json.dumps(asdict(value), ensure_ascii=False))
