"""Prompt assembly: three layers from text files, as chat messages.

(a) fixed rules → the system message (identical for every task, so a server's prefix cache
    can share it); (b) task knowledge and evidence hints, then (c) the task's files, tables,
    document hints and question → the first user message.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from datasolver.agent.brief import TaskBrief
from datasolver.agent.knowledge import compact_knowledge, described_tables
from datasolver.agent.limits import Limits
from datasolver.agent.prompts import render_prompt
from datasolver.agent.video import pick_frames, user_content
from datasolver.llm import system_message, user_message

NO_KNOWLEDGE = "(this task has no knowledge.md)"
KNOWLEDGE_OMITTED = " less what Tables shows (`\\knowledge` prints it verbatim)"


def build_system_prompt(limits: Limits = Limits()) -> str:
    """Layer (a): the fixed rules."""
    return render_prompt("rules", max_requests=limits.max_requests_per_attempt)


def build_knowledge_prompt(knowledge: str, evidence_hints: str = "", *, video: bool = False,
                           described: Collection[str] = ()) -> str:
    """Layer (b): knowledge.md (less the column types and examples that the descriptions of the
    `described` tables already give: agent.knowledge), evidence hints when other stages produced
    them, and the fixed video rules when the task has media."""
    evidence = render_prompt("evidence", evidence_hints=evidence_hints.strip()) if evidence_hints.strip() else ""
    if video:
        evidence += render_prompt("video_rules")
    compact = compact_knowledge(knowledge, described)
    omitted = KNOWLEDGE_OMITTED if compact != knowledge else ""
    return render_prompt("knowledge", knowledge=compact.strip() or NO_KNOWLEDGE, evidence=evidence, omitted=omitted)


def build_task_prompt(brief: TaskBrief) -> str:
    """Layer (c): directory tree, table descriptions, document-table hints, the video timeline,
    question, solver hint."""
    documents = f"\n{brief.document_tables.strip()}\n" if brief.document_tables.strip() else ""
    if brief.video.strip():
        documents += render_prompt("video", timeline=brief.video.strip())
    return render_prompt(
        "task", tree=brief.tree, tables=brief.tables, document_tables=documents, question=brief.question
    )


def build_user_prompt(brief: TaskBrief, evidence_hints: str = "") -> str:
    """Layers (b) and (c) as one text; the `\\lint` summary joins the evidence hints."""
    evidence = "\n\n".join(part.strip() for part in (evidence_hints, brief.lint) if part.strip())
    knowledge = build_knowledge_prompt(brief.knowledge, evidence, video=bool(brief.video.strip()),
                                       described=described_tables(brief.digest, brief.folded))
    return knowledge.rstrip() + "\n\n" + build_task_prompt(brief)


def build_messages(brief: TaskBrief, limits: Limits = Limits(), evidence_hints: str = "") -> list[dict[str, Any]]:
    """The opening conversation: [system (rules), user (knowledge + task)].

    With `limits.vision`, the user message also carries up to `limits.vision_images` keyframes as
    image parts."""
    text = build_user_prompt(brief, evidence_hints)
    images = pick_frames(brief.video_frames, limits.vision_images) if limits.vision else ()
    user = user_message(text)
    user["content"] = user_content(text, images, limits.vision_max_side)
    return [system_message(build_system_prompt(limits)), user]
