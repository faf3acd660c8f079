"""The LLM structurizer: plan → part workers → join on record id → optional normalization."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from datasolver.documents.errors import PlanError
from datasolver.documents.structurize.cache import cache_key, load_cached, save_cached
from datasolver.documents.structurize.join import join_parts
from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.documents.structurize.normalize import apply_mapping, needs_normalization, normalize_column
from datasolver.documents.structurize.plan import make_plan
from datasolver.documents.structurize.result import Structured
from datasolver.documents.structurize.sections import Part, split_parts
from datasolver.documents.structurize.workers import PartResult, fill_part
from datasolver.llm.errors import LLMError

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient


def _lines(first: int, last: int) -> str:
    return f"lines {first}-{last}" if first != last else f"line {first}"


async def structurize_document(
    llm: LLMClient,
    text: str,
    *,
    document_name: str,
    knowledge: str | None = None,
    limits: StructurizeLimits | None = None,
    location: Callable[[int, int], str] = _lines,
    document_sha256: str | None = None,
    cache_dir: Path | None = None,
) -> Structured:
    """One table from a narrative document. Raises PlanError (or LLMError from the planner) when
    no plan can be made; worker and normalizer failures become warnings on the result.

    With `cache_dir` and `document_sha256`, a result for the same (document, model, knowledge)
    is reused without any model call.
    """
    limits = limits or StructurizeLimits()
    key = None
    if cache_dir is not None and document_sha256:
        key = cache_key(document_sha256, llm.settings.model, knowledge)
        cached = load_cached(cache_dir, key)
        if cached is not None:
            return cached
    parts = split_parts(text, limits.max_part_chars)
    if not parts:
        raise PlanError(f"{document_name}: the document is empty")
    semaphore = asyncio.Semaphore(max(1, limits.concurrency))
    log: list[str] = []
    plan = await make_plan(
        llm, text, parts, document_name=document_name, knowledge=knowledge,
        limits=limits, semaphore=semaphore, log=log,
    )

    async def worker(part: Part) -> PartResult:
        try:
            return await fill_part(
                llm, part, plan, document_name=document_name, limits=limits, semaphore=semaphore
            )
        except LLMError as exc:
            return PartResult(part, defects=[f"part {part.index} ({part.title}): model call failed: {exc}"])

    results = await asyncio.gather(*(worker(p) for p in parts))
    joined = join_parts(plan, results, location)
    warnings = log + [d for r in results for d in r.defects] + joined.warnings
    if limits.normalize:
        warnings += await _normalize(llm, plan_meanings={c.name: c.meaning for c in plan.columns},
                                     columns=joined.columns, rows=joined.rows, limits=limits, semaphore=semaphore)
    result = Structured(
        columns=joined.columns, rows=joined.rows, key=plan.record_id_column,
        provenance=joined.provenance, warnings=warnings, worker_calls=sum(r.calls for r in results),
    )
    if key is not None:
        save_cached(cache_dir, key, result)  # type: ignore[arg-type]
    return result


async def _normalize(
    llm: LLMClient,
    *,
    plan_meanings: dict[str, str],
    columns: list[str],
    rows: list[list[str]],
    limits: StructurizeLimits,
    semaphore: asyncio.Semaphore,
) -> list[str]:
    """Normalize each mixed-form column (never the id column); return warnings."""
    targets = [i for i in range(1, len(columns)) if needs_normalization([r[i] for r in rows])]
    outcomes = await asyncio.gather(*(
        normalize_column(llm, columns[i], plan_meanings.get(columns[i], ""), [r[i] for r in rows],
                         limits=limits, semaphore=semaphore)
        for i in targets
    ))
    warnings = []
    for i, norm in zip(targets, outcomes):
        if norm.error:
            warnings.append(f"column {columns[i]}: {norm.error}")
            continue
        apply_mapping(rows, i, norm)
        if norm.failed:
            warnings.append(f"column {columns[i]}: normalize failed on {len(norm.failed)} value(s), kept as written")
    return warnings
