"""Optional value normalization: a pure function written by the model, run in a separate process
with a time limit, applied through a value map; on any failure the original values stay."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.documents.errors import NormalizerFailed
from datasolver.documents.prompts import render_prompt
from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.llm.errors import LLMError
from datasolver.llm.messages import user_message

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

RUNNER = Path(__file__).with_name("_normalizer_runner.py")
MAX_EXAMPLE_VALUES = 30
MEMORY_LIMIT_BYTES = 1 << 30
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


@dataclass
class Normalized:
    """A column after normalization: `mapping` raw → new text (None = empty); failures kept raw."""

    column: str
    mapping: dict[str, str | None] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    error: str | None = None


def needs_normalization(values: list[str]) -> bool:
    """True when a column mixes several written forms of numbers (`1.2亿` beside `12000万`).

    Plain numbers only, or one consistent shape (`2022年07月26日` everywhere), need nothing.
    """
    present = [v for v in values if v.strip()]
    if len(set(present)) < 2 or all(_PLAIN_NUMBER.match(v.replace(",", "")) for v in present):
        return False
    with_digits = [v for v in present if any(ch.isdigit() for ch in v)]
    if len(with_digits) * 2 < len(present):
        return False
    shapes = {re.sub(r"\d+", "#", v) for v in with_digits}
    return len(shapes) > 1


def extract_code(content: str) -> str:
    """The Python code of the answer: the first fenced block, else the whole text."""
    m = _CODE_BLOCK.search(content or "")
    return (m.group(1) if m else content or "").strip()


def _limit_resources(cpu_s: int) -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # no file can grow: no writes


def run_normalizer(code: str, values: list[str], timeout_s: float) -> tuple[dict[str, str | None], dict[str, str]]:
    """Apply `normalize` from `code` to each value in an isolated child process.

    Returns (mapping, per-value failures). Raises NormalizerFailed on syntax errors, timeouts
    (the whole process group is killed), crashes or unreadable output.
    """
    cpu = max(1, int(timeout_s) + 1)
    with tempfile.TemporaryDirectory(prefix="datasolver-normalize-") as tmp:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(RUNNER)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=tmp, env={"PATH": os.defpath, "PYTHONHASHSEED": "0"},
            start_new_session=True,
            preexec_fn=(lambda: _limit_resources(cpu)) if os.name == "posix" else None,
        )
        payload = json.dumps({"code": code, "values": values}, ensure_ascii=False).encode("utf-8")
        try:
            stdout, stderr = proc.communicate(payload, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise NormalizerFailed(f"normalize did not finish within {timeout_s:g}s; original values kept") from None
    if proc.returncode != 0:
        tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise NormalizerFailed(f"normalizer process failed: {tail[0][:200]}")
    try:
        answer = json.loads(stdout.decode("utf-8"))
    except ValueError as exc:
        raise NormalizerFailed(f"normalizer output unreadable: {exc}") from exc
    if "error" in answer:
        raise NormalizerFailed(f"normalize could not be defined: {answer['error'][:200]}")
    return answer["map"], answer["failed"]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


async def normalize_column(
    llm: LLMClient,
    column: str,
    meaning: str,
    values: list[str],
    *,
    limits: StructurizeLimits,
    semaphore: asyncio.Semaphore,
) -> Normalized:
    """Ask for a normalizer and run it over the distinct values; errors end up in `.error`."""
    distinct = list(dict.fromkeys(v for v in values if v.strip()))
    out = Normalized(column)
    prompt = render_prompt(
        "normalize",
        column=column,
        meaning=meaning or "no description",
        values="\n".join(f"- {v!r}" for v in distinct[:MAX_EXAMPLE_VALUES]),
    )
    try:
        async with semaphore:
            answer = await llm.chat([user_message(prompt)], enable_thinking=limits.enable_thinking)
        out.mapping, out.failed = await asyncio.to_thread(
            run_normalizer, extract_code(answer.content), distinct, limits.normalize_timeout_s
        )
    except (NormalizerFailed, LLMError) as exc:
        out.error = str(exc)
    return out


def apply_mapping(rows: list[list[str]], index: int, norm: Normalized) -> int:
    """Replace column `index` through the value map (failed or unmapped values stay); count changes."""
    changed = 0
    for row in rows:
        raw = row[index]
        if raw in norm.mapping and raw not in norm.failed:
            new = norm.mapping[raw] or ""
            if new != raw:
                row[index] = new
                changed += 1
    return changed
