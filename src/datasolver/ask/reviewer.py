"""The reviewer pass: one more model call checks the plan and the evidence against the question.

It may send the analyst back once. An unreadable verdict counts as accept (the reviewer must
never be the reason a question goes unanswered); the reason is kept in the result's notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from datasolver.ask.handles import HandleTable
from datasolver.ask.prompts import render_prompt
from datasolver.ask.render import render_table
from datasolver.llm import parse_tool_arguments, user_message

if TYPE_CHECKING:
    from datasolver.ask.config import AskConfig
    from datasolver.ask.toolbox import FinalAnswer
    from datasolver.llm import LLMClient

_REVISE_WORDS = ("revise", "reject", "send back", "sent back", "fail", "wrong", "incorrect")


@dataclass
class Step:
    """One tool call as the reviewer and the record see it."""

    tool: str
    arguments: dict[str, Any] | str
    outcome: str
    ok: bool


class ReviewVerdict(BaseModel):
    """What the reviewer replies."""

    verdict: str
    feedback: str = ""


@dataclass
class Review:
    """The reviewer's decision."""

    accepted: bool
    feedback: str = ""
    problem: str | None = None  # why the verdict could not be read, when it could not


def render_plan(steps: list[Step]) -> str:
    """The analyst's steps, one line each."""
    if not steps:
        return "(no tool calls)"
    lines = []
    for number, step in enumerate(steps, 1):
        args = step.arguments if isinstance(step.arguments, str) else json.dumps(step.arguments, ensure_ascii=False)
        lines.append(f"{number}. {step.tool}({args[:400]}) → {step.outcome}")
    return "\n".join(lines)


def render_evidence(final: FinalAnswer, handles: HandleTable, rows: int) -> str:
    """Evidence SQL and rows of each result the answer rests on."""
    if not final.evidence:
        return "(the answer cites no stored result)"
    parts = []
    for handle in final.evidence[:3]:
        result = handles.fetch(handle.index, rows)
        parts.append(f"{handles.evidence_sql(handle.index)}\n\n{render_table(handle, result, rows)}")
    return "\n\n".join(parts)


async def review_answer(
    client: LLMClient, config: AskConfig, *, question: str, steps: list[Step], final: FinalAnswer,
    handles: HandleTable,
) -> Review:
    """Ask the reviewer; return accept or revise with feedback."""
    prompt = render_prompt(
        "review", question=question, plan=render_plan(steps), answer=final.text,
        evidence=render_evidence(final, handles, config.limits.answer_rows),
    )
    result = await client.chat([user_message(prompt)], enable_thinking=config.enable_thinking,
                               temperature=config.temperature)
    return parse_verdict(result.content)


def parse_verdict(text: str) -> Review:
    """Read the reviewer's JSON (repaired if needed); unreadable → accept with the problem noted."""
    parsed = parse_tool_arguments(text, ReviewVerdict)
    if parsed.value is None:
        return Review(True, problem=f"unreadable reviewer verdict: {text[:200]!r}")
    verdict: ReviewVerdict = parsed.value  # type: ignore[assignment]
    revise = verdict.verdict.strip().lower().startswith(_REVISE_WORDS)
    if revise and not verdict.feedback.strip():
        return Review(True, problem="reviewer asked to revise without saying why; accepted")
    return Review(not revise, verdict.feedback.strip() if revise else "")
