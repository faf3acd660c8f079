"""Prompt assembly: three layers from text files, as chat messages.

(a) fixed rules → the system message (identical for every task, so a server's prefix cache
    can share it); (b) task knowledge and evidence hints, then (c) the task's files, tables,
    document hints and question → the first user message.
"""

from __future__ import annotations

from typing import Any

from datasolver.agent.brief import TaskBrief
from datasolver.agent.knowledge import merge_knowledge
from datasolver.agent.limits import Limits
from datasolver.agent.prompts import render_prompt
from datasolver.agent.video import pick_frames, user_content
from datasolver.llm import system_message, user_message

NO_KNOWLEDGE = "(this task has no knowledge.md)"
KNOWLEDGE_OMITTED = " less what Tables shows (`\\knowledge` prints it verbatim)"


# Below this context window (tokens) the rules are the short ones: the full rules and the tool
# schemas take about 2,700 tokens, a third of an 8k window.
SHORT_RULES_BELOW = 16_384


def build_system_prompt(limits: Limits = Limits(), window: int | None = None) -> str:
    """Layer (a): the fixed rules; the short ones for a known window under SHORT_RULES_BELOW."""
    name = "rules_short" if window is not None and window < SHORT_RULES_BELOW else "rules"
    return render_prompt(name, max_requests=limits.max_requests_per_attempt, example=render_prompt("example").strip(),
                         untrusted=render_prompt("untrusted").strip())


def _knowledge_prompt(knowledge: str, compact: str, evidence_hints: str, video: bool) -> str:
    """Layer (b): knowledge.md as `compact` (less what the table descriptions already say:
    agent.knowledge), evidence hints when other stages produced them, and the fixed video rules
    when the task has media."""
    evidence = render_prompt("evidence", evidence_hints=evidence_hints.strip()) if evidence_hints.strip() else ""
    if video:
        evidence += render_prompt("video_rules")
    omitted = KNOWLEDGE_OMITTED if compact != knowledge else ""
    return render_prompt("knowledge", knowledge=compact.strip() or NO_KNOWLEDGE, evidence=evidence, omitted=omitted)


def build_task_prompt(brief: TaskBrief, tables: str | None = None) -> str:
    """Layer (c): directory tree, table descriptions (`tables`, else the brief's), document-table
    hints, the video timeline, question, solver hint."""
    documents = f"\n{brief.document_tables.strip()}\n" if brief.document_tables.strip() else ""
    if brief.video.strip():
        documents += render_prompt("video", timeline=brief.video.strip())
    linking = f"\n# Linked to the question\n{brief.linking.strip()}\n" if brief.linking.strip() else ""
    return render_prompt("task", tree=brief.tree, tables=brief.tables if tables is None else tables,
                         document_tables=documents, linking=linking, question=brief.question)


def build_user_prompt(brief: TaskBrief, evidence_hints: str = "") -> str:
    """Layers (b) and (c) as one text; the `\\lint` summary joins the evidence hints. A column
    meaning of knowledge.md that can stand on a column line of the described tables is said there
    only (`agent.knowledge.merge_knowledge`)."""
    evidence = "\n\n".join(part.strip() for part in (evidence_hints, brief.lint) if part.strip())
    merged = merge_knowledge(brief.knowledge, brief.digest, brief.folded)
    tables = None
    if brief.digest is not None and (merged.notes or merged.joins):
        tables = brief.digest.render(brief.folded, merged.notes) + merged.join_text()
    knowledge = _knowledge_prompt(brief.knowledge, merged.text, evidence, bool(brief.video.strip()))
    return knowledge.rstrip() + "\n\n" + build_task_prompt(brief, tables)


def build_messages(brief: TaskBrief, limits: Limits = Limits(), evidence_hints: str = "",
                   window: int | None = None) -> list[dict[str, Any]]:
    """The opening conversation: [system (rules, short ones for a small ``window``), user (knowledge + task)].

    With `limits.vision`, the user message also carries up to `limits.vision_images` keyframes as
    image parts."""
    text = build_user_prompt(brief, evidence_hints)
    images = pick_frames(brief.video_frames, limits.vision_images) if limits.vision else ()
    user = user_message(text)
    user["content"] = user_content(text, images, limits.vision_max_side)
    return [system_message(build_system_prompt(limits, window)), user]
