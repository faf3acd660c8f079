"""The advisory answer judge: N independent model calls on "does the video show the final answer?".

Each call sees the question and the timeline (and the keyframes as images on a vision endpoint)
and answers a small JSON object. The majority verdict becomes a hint for the Solver's prompt; the
Solver still decides. Failed or unparseable calls are counted and left out of the majority.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from datasolver.agent.prompts import render_prompt
from datasolver.agent.video import user_content
from datasolver.llm import LLMClient, LLMError, loads_lenient, user_message
from datasolver.video import unsupported_numbers

JUDGE_TEMPERATURE = 0.7  # independent calls should be able to disagree


@dataclass
class Vote:
    shows_answer: bool
    answer_rows: list[list[str]] = field(default_factory=list)
    target_columns: list[str] = field(default_factory=list)
    key_frames: list[int] = field(default_factory=list)
    confidence: float = 0.0


@dataclass
class Verdict:
    """The majority of the valid votes (None when no call gave a usable answer)."""

    votes: list[Vote]
    failed: int
    shows_answer: bool | None
    answer_rows: list[list[str]] = field(default_factory=list)
    target_columns: list[str] = field(default_factory=list)
    key_frames: list[int] = field(default_factory=list)
    confidence: float = 0.0

    def hint(self, frames_text: str = "") -> str:
        """The verdict as lines for the Solver's evidence hints ("" when there is no verdict)."""
        if self.shows_answer is None:
            return ""
        agree = sum(1 for v in self.votes if v.shows_answer == self.shows_answer)
        lines = [f"Video answer judge (advisory, {agree} of {len(self.votes) + self.failed} calls agree): "
                 + ("the video appears to SHOW the final answer." if self.shows_answer
                    else "the video does NOT show the final answer; compute it from the data, using the "
                         "video's filters.")]
        if self.answer_rows:
            rows = "; ".join(" | ".join(r) for r in self.answer_rows[:20])
            lines.append(f"- candidate answer rows: {rows}")
            if frames_text:
                flagged = unsupported_numbers(rows, frames_text)
                if flagged:
                    lines.append(f"- numbers not found in any keyframe's OCR text (check them): {', '.join(flagged)}")
        if self.target_columns:
            lines.append(f"- target columns: {', '.join(self.target_columns)}")
        if self.key_frames:
            lines.append(f"- key frames: {', '.join(f'FRAME {n}' for n in self.key_frames)}")
        lines.append(f"- confidence: {self.confidence:.2f}. Verify against the data before answering.")
        return "\n".join(lines)


def parse_vote(content: str) -> Vote | None:
    """One call's answer, or None when it holds no usable JSON object."""
    data: Any = loads_lenient(content or "")
    if not isinstance(data, dict) or not isinstance(data.get("shows_answer"), bool):
        return None
    rows = [[str(c) for c in row] if isinstance(row, list) else [str(row)]
            for row in data.get("answer_rows") or [] if row is not None]
    frames = [int(f) for f in data.get("key_frames") or [] if isinstance(f, (int, float)) or str(f).isdigit()]
    try:
        confidence = min(max(float(data.get("confidence", 0.0)), 0.0), 1.0)
    except (TypeError, ValueError):
        confidence = 0.0
    return Vote(data["shows_answer"], rows, [str(c) for c in data.get("target_columns") or []], frames, confidence)


def majority(votes: list[Vote], failed: int) -> Verdict:
    """Majority of `shows_answer` (a tie means no), details from the agreeing votes."""
    if not votes:
        return Verdict([], failed, None)
    yes = sum(v.shows_answer for v in votes)
    shows = yes > len(votes) - yes
    agreeing = [v for v in votes if v.shows_answer == shows]
    rows_count = Counter(json.dumps(v.answer_rows, ensure_ascii=False) for v in agreeing if v.answer_rows)
    rows = json.loads(rows_count.most_common(1)[0][0]) if shows and rows_count else []
    columns = Counter(json.dumps(v.target_columns, ensure_ascii=False) for v in agreeing if v.target_columns)
    frames = sorted({f for v in agreeing for f in v.key_frames})
    confidence = sum(v.confidence for v in agreeing) / len(votes)  # dissent lowers it
    return Verdict(votes, failed, shows, rows,
                   json.loads(columns.most_common(1)[0][0]) if columns else [], frames, round(confidence, 2))


async def judge_video(client: LLMClient, question: str, timeline: str, *, calls: int = 3,
                      images: tuple = (), max_side: int = 1280) -> Verdict:
    """`calls` independent judge calls in parallel, then their majority."""
    text = render_prompt("video_judge", question=question, timeline=timeline)
    message = user_message(text)
    message["content"] = user_content(text, tuple(images), max_side)

    async def one() -> Vote | None:
        try:
            result = await client.chat([message], temperature=JUDGE_TEMPERATURE)
        except LLMError:
            return None
        return parse_vote(result.content)

    outcomes = await asyncio.gather(*(one() for _ in range(calls)))
    votes = [v for v in outcomes if v is not None]
    return majority(votes, calls - len(votes))
