"""Part workers: one Markdown table per part, exactly one row per record id, checked and retried."""

from __future__ import annotations

import asyncio
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from datasolver.data.pipe_tables import find_pipe_tables
from datasolver.documents.prompts import render_prompt
from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.documents.structurize.plan import Plan
from datasolver.documents.structurize.sections import Part
from datasolver.llm.messages import assistant_message, user_message

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

ID_HEADER = "record_id"
# What models write for "not stated" although told to leave the cell empty.
EMPTY_MARKERS = {"", "-", "--", "—", "–", "n/a", "na", "null", "none", "nan", "未提及", "未说明"}
MAX_IDS_NAMED = 20


def id_key(text: str) -> str:
    """Comparison form of an id: NFKC (full/half width alike), no whitespace."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_NAMED])
    return shown + (f" … (+{len(ids) - MAX_IDS_NAMED} more)" if len(ids) > MAX_IDS_NAMED else "")


def check_part_table(
    content: str, ids: list[str], columns: list[str], id_column: str
) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Values by record id (non-empty cells only) and the contract's defects, each named exactly."""
    tables = find_pipe_tables((content or "").split("\n"))
    if not tables:
        return {}, ["no Markdown table found in your answer"]
    table = tables[0]
    header = [h.strip().strip("`") for h in table.header]
    lowered = [h.lower() for h in header]
    id_idx = next((i for i, h in enumerate(header) if h.lower() in (ID_HEADER, id_column.lower())), None)
    if id_idx is None:
        return {}, [f"the first column must be `{ID_HEADER}`; your header was: | {' | '.join(header)} |"]
    defects: list[str] = []
    col_idx = {c: lowered.index(c.lower()) for c in columns if c.lower() in lowered}
    missing_cols = [c for c in columns if c not in col_idx]
    if missing_cols:
        defects.append(f"missing columns: {', '.join(missing_cols)}")
    by_key = {id_key(i): i for i in ids}
    values: dict[str, dict[str, str]] = {}
    unexpected: list[str] = []
    duplicated: list[str] = []
    for row in table.rows:
        raw = row[id_idx].strip()
        rid = by_key.get(id_key(raw))
        if rid is None:
            if raw:
                unexpected.append(raw)
            continue
        if rid in values:
            duplicated.append(rid)
            continue
        values[rid] = {
            c: row[i].strip() for c, i in col_idx.items() if row[i].strip().lower() not in EMPTY_MARKERS
        }
    missing = [i for i in ids if i not in values]
    if missing:
        defects.append(f"missing record ids ({len(missing)}): {_named(missing)}")
    if unexpected:
        defects.append(f"record ids not in my list ({len(unexpected)}): {_named(unexpected)}; use only the listed ids, spelled exactly")
    if duplicated:
        defects.append(f"record ids with more than one row: {_named(duplicated)}; give each id exactly one row")
    return values, defects


@dataclass
class PartResult:
    """What one part contributed: values by id (non-empty only) and defects left after retries."""

    part: Part
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    defects: list[str] = field(default_factory=list)
    calls: int = 0


def ids_for_part(part: Part, ids: list[str]) -> list[str]:
    """Ids the part mentions by name; all ids when it names none (it may use pronouns or codes)."""
    text = id_key(part.text)
    named = [i for i in ids if id_key(i) and id_key(i) in text]
    return named or ids


async def fill_part(
    llm: LLMClient,
    part: Part,
    plan: Plan,
    *,
    document_name: str,
    limits: StructurizeLimits,
    semaphore: asyncio.Semaphore,
) -> PartResult:
    """Ask for this part's table, in batches of ids, retrying each batch with its defects."""
    result = PartResult(part)
    columns = plan.columns_of(part.index)
    if not columns:
        return result
    ids = ids_for_part(part, plan.all_ids())
    meanings = {c.name: c.meaning for c in plan.columns}
    header = "| " + " | ".join([ID_HEADER] + columns) + " |"
    step = max(1, limits.max_ids_per_call)
    for start in range(0, len(ids), step):
        batch = ids[start : start + step]
        prompt = render_prompt(
            "section",
            document_name=document_name,
            record_id_column=plan.record_id_column,
            columns="\n".join(f"- {c}: {meanings.get(c) or '(see knowledge notes)'}" for c in columns),
            record_ids="\n".join(f"- {i}" for i in batch),
            part_title=f"[{part.index}] {part.title}",
            part=part.text,
            header=header,
            count=len(batch),
        )
        messages: list[dict[str, Any]] = [user_message(prompt)]
        best: dict[str, dict[str, str]] = {}
        defects: list[str] = []
        for _ in range(limits.part_retries + 1):
            async with semaphore:
                answer = await llm.chat(messages, enable_thinking=limits.enable_thinking)
            result.calls += 1
            values, defects = check_part_table(answer.content, batch, columns, plan.record_id_column)
            if len(values) >= len(best):
                best = values
            if not defects:
                break
            retry = render_prompt(
                "section_retry", defects="\n".join(f"- {d}" for d in defects), header=header, count=len(batch)
            )
            messages += [assistant_message(answer.content), user_message(retry)]
        result.values.update(best)
        result.defects.extend(f"part {part.index} ({part.title}): {d}" for d in defects)
    return result
