"""Optional value normalization: a pure function written by the model, run in the sandbox (the
same one as solver.py: reads confined, no network, no writes outside its folder, memory, CPU and
time bounded), applied through a value map; on any failure the original values stay."""

from __future__ import annotations

import asyncio
import json
import re
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
from datasolver.sandbox import SandboxError, SandboxLimits, UnsafeFile, run_sandboxed, safe_files

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

RUNNER = Path(__file__).with_name("_normalizer_runner.py")
MAX_EXAMPLE_VALUES = 30
MEMORY_LIMIT_BYTES = 1 << 30
START_GRACE_S = 10.0  # the sandbox's own start on a loaded machine; the runner times the model's code
OUTPUT_MAX_BYTES = 64 << 20  # the value map written by the runner (read back capped, never through a link)
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


def normalizer_limits(timeout_s: float) -> SandboxLimits:
    """The sandbox of one normalizer run: 1 GiB, its map as the only file, and a time and CPU backstop
    past the runner's own limit on the model's code (`timeout_s`)."""
    backstop = timeout_s + START_GRACE_S
    return SandboxLimits(timeout_s=backstop, memory_bytes=MEMORY_LIMIT_BYTES, tree_memory_bytes=MEMORY_LIMIT_BYTES,
                         cpu_seconds=int(backstop) + 1, file_size_bytes=OUTPUT_MAX_BYTES,
                         disk_bytes=OUTPUT_MAX_BYTES, max_processes=16)


def run_normalizer(code: str, values: list[str], timeout_s: float) -> tuple[dict[str, str | None], dict[str, str]]:
    """Apply `normalize` from `code` to each value in a sandboxed child process.

    The child reads its input from and writes its map to a fresh folder, the only one it may
    write; it may read nothing else but the Python installation and system libraries, and has no
    network. Returns (mapping, per-value failures). Raises NormalizerFailed on syntax errors,
    timeouts (the whole tree is killed), crashes, a sandbox that cannot start, or unreadable output.
    """
    with tempfile.TemporaryDirectory(prefix="datasolver-normalize-") as tmp:
        folder = Path(tmp)
        (folder / "in.json").write_text(json.dumps({"code": code, "values": values, "timeout_s": timeout_s}, ensure_ascii=False),
                                        encoding="utf-8")
        try:
            run = run_sandboxed([sys.executable, "-I", "-S", str(RUNNER), "in.json", "out.json"], cwd=folder,
                                write_dirs=[folder], log_dir=folder, limits=normalizer_limits(timeout_s),
                                env={"PYTHONHASHSEED": "0"})
        except SandboxError as exc:
            raise NormalizerFailed(f"the normalizer sandbox could not start: {exc}") from exc
        if run.timed_out:  # the model's code stopped the runner's own clock (or the sandbox never started)
            raise NormalizerFailed(f"normalize did not finish within {timeout_s:g}s; original values kept")
        if run.killed_for or run.returncode != 0:
            why = run.killed_for or (run.stderr.strip().splitlines()[-1:] or [f"exit status {run.returncode}"])[0]
            raise NormalizerFailed(f"normalizer process failed: {why[:200]}")
        try:
            answer = json.loads(safe_files.read_text(folder / "out.json", max_bytes=OUTPUT_MAX_BYTES))
        except (OSError, UnsafeFile, ValueError) as exc:
            raise NormalizerFailed(f"normalizer output unreadable: {exc}") from exc
    if not isinstance(answer, dict):
        raise NormalizerFailed("normalizer output unreadable: not an object")
    if answer.get("timeout"):
        raise NormalizerFailed(f"normalize did not finish within {timeout_s:g}s; original values kept")
    if "error" in answer:
        raise NormalizerFailed(f"normalize could not be defined: {str(answer['error'])[:200]}")
    return _checked_map(answer)


def _checked_map(answer: dict) -> tuple[dict[str, str | None], dict[str, str]]:
    """The runner's answer as typed maps (the runner is the model's process: its output is checked)."""
    mapping, failed = answer.get("map"), answer.get("failed")
    if not isinstance(mapping, dict) or not isinstance(failed, dict):
        raise NormalizerFailed("normalizer output unreadable: no map")
    if not all(isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in mapping.items()) or \
            not all(isinstance(k, str) and isinstance(v, str) for k, v in failed.items()):
        raise NormalizerFailed("normalizer output unreadable: a value that is not text")
    return mapping, failed


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
