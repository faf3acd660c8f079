"""The planner: record id column, the complete list of record ids, columns, and which part holds what."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from datasolver.documents.errors import PlanError
from datasolver.documents.prompts import render_prompt
from datasolver.documents.structurize.limits import StructurizeLimits
from datasolver.documents.structurize.sections import Part
from datasolver.llm.messages import assistant_message, user_message
from datasolver.llm.repair import parse_tool_arguments

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

MIN_SNIPPET_CHARS = 80


class ColumnSpec(BaseModel):
    """One output column."""

    name: str = Field(description="column name, from knowledge.md when it names the field")
    meaning: str = Field("", description="what the column holds, with unit or format")


class PartColumns(BaseModel):
    """Which columns one part states values for."""

    index: int
    columns: list[str] = Field(default_factory=list)


class Plan(BaseModel):
    """The planner's answer."""

    record_id_column: str = Field(description="the column that names each record")
    record_ids: list[str] = Field(description="every record id, as written in the document")
    columns: list[ColumnSpec]
    parts: list[PartColumns] = Field(default_factory=list)
    extra_ids: list[str] = Field(default_factory=list, description="ids found by the parts, not the planner")

    def all_ids(self) -> list[str]:
        return self.record_ids + [i for i in self.extra_ids if i not in set(self.record_ids)]

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def columns_of(self, index: int) -> list[str]:
        """Columns to ask of one part: its listed columns, or all when the plan did not map parts."""
        if not self.parts:
            return self.column_names()
        for p in self.parts:
            if p.index == index:
                return [c for c in self.column_names() if c in p.columns]
        return []  # a part the plan left out holds no data


def tidy_plan(plan: Plan, n_parts: int) -> tuple[Plan, list[str]]:
    """Fix what can be fixed silently (spaces, duplicates, the id column among the columns) and
    list the defects that need the model (no ids, no columns, unknown parts)."""
    defects: list[str] = []
    plan.record_id_column = plan.record_id_column.strip() or "record_id"
    plan.record_ids = list(dict.fromkeys(i.strip() for i in plan.record_ids if i and i.strip()))
    seen: set[str] = set()
    columns = []
    for c in plan.columns:
        name = c.name.strip()
        if name and name.lower() not in seen and name != plan.record_id_column:
            seen.add(name.lower())
            columns.append(ColumnSpec(name=name, meaning=c.meaning.strip()))
    plan.columns = columns
    if not plan.record_ids:
        defects.append("record_ids is empty: list every record the document describes")
    if not plan.columns:
        defects.append(f"columns is empty: list the attributes recorded for each {plan.record_id_column}")
    bad = [p.index for p in plan.parts if not 0 <= p.index < n_parts]
    if bad:
        defects.append(f"parts {bad} do not exist; part indexes run from 0 to {n_parts - 1}")
    known = set(plan.column_names())
    for p in plan.parts:
        p.columns = [c.strip() for c in p.columns if c.strip() in known]
    return plan, defects


def _views(text: str, parts: list[Part], limits: StructurizeLimits) -> tuple[str, str, str]:
    """(view label, document text, parts listing): the whole text when it fits, else an outline."""
    listing = "\n".join(f"[{p.index}] {p.title} (lines {p.first_line}-{p.last_line})" for p in parts)
    if len(text) <= limits.max_plan_chars:
        return "full text", text, listing
    budget = max(MIN_SNIPPET_CHARS, limits.max_plan_chars // max(1, len(parts)))
    outline = "\n\n".join(
        f"[{p.index}] {p.title} (lines {p.first_line}-{p.last_line})\n{' '.join(p.text.split())[:budget]}…"
        for p in parts
    )
    return "too long to show whole: an outline with the start of each part", outline, "(the numbered parts of the outline above)"


async def make_plan(
    llm: LLMClient,
    text: str,
    parts: list[Part],
    *,
    document_name: str,
    knowledge: str | None,
    limits: StructurizeLimits,
    semaphore: asyncio.Semaphore,
    log: list[str],
) -> Plan:
    """Ask for a plan, retrying with the specific defects; raise PlanError when none is usable."""
    view, document, listing = _views(text, parts, limits)
    prompt = render_prompt(
        "plan",
        knowledge=(knowledge or "(none)")[: limits.max_knowledge_chars],
        document_name=document_name,
        document_view=view,
        document=document,
        parts=listing,
    )
    messages: list[dict[str, Any]] = [user_message(prompt)]
    problem = ""
    for attempt in range(limits.plan_retries + 1):
        async with semaphore:
            result = await llm.chat(messages, enable_thinking=limits.enable_thinking)
        parsed = parse_tool_arguments(result.content, Plan, tool_name="plan")
        if parsed.ok:
            plan, defects = tidy_plan(parsed.value, len(parts))  # type: ignore[arg-type]
            if not defects:
                if len(text) > limits.max_plan_chars:
                    await _collect_ids(llm, plan, parts, document_name, limits, semaphore, log)
                return plan
            problem = "Your plan has these defects:\n- " + "\n- ".join(defects)
        else:
            problem = parsed.error or "unusable answer"
        log.append(f"plan attempt {attempt + 1}: {problem.splitlines()[0][:200]}")
        messages += [assistant_message(result.content), user_message(problem + "\nSend the whole corrected JSON object.")]
    raise PlanError(f"{document_name}: no usable plan after {limits.plan_retries + 1} attempts ({problem[:300]})")


class _Ids(BaseModel):
    record_ids: list[str]


async def _collect_ids(
    llm: LLMClient,
    plan: Plan,
    parts: list[Part],
    document_name: str,
    limits: StructurizeLimits,
    semaphore: asyncio.Semaphore,
    log: list[str],
) -> None:
    """The planner saw only an outline: ask each part for the record ids it mentions, and add them."""

    async def one(part: Part) -> list[str]:
        prompt = render_prompt(
            "ids", document_name=document_name, record_id_column=plan.record_id_column, part=part.text
        )
        async with semaphore:
            result = await llm.chat([user_message(prompt)], enable_thinking=limits.enable_thinking)
        parsed = parse_tool_arguments(result.content, _Ids, tool_name="record_ids")
        if not parsed.ok:
            log.append(f"part {part.index}: record ids unreadable ({(parsed.error or '')[:120]})")
            return []
        return [i.strip() for i in parsed.value.record_ids if i.strip()]  # type: ignore[union-attr]

    wanted = [p for p in parts if plan.columns_of(p.index)]
    found = await asyncio.gather(*(one(p) for p in wanted))
    known = set(plan.record_ids)
    plan.extra_ids = [i for i in dict.fromkeys(i for ids in found for i in ids) if i not in known]
    if plan.extra_ids:
        log.append(f"{len(plan.extra_ids)} record id(s) found by the parts beyond the planner's list")
