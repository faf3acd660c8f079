"""Relevance votes: N parallel model votes per item list; per-item majority, ties and failures → relevant."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from datasolver.documents.records import DEFAULT_VOTES
from datasolver.documents.prompts import render_prompt
from datasolver.llm.errors import LLMError
from datasolver.llm.repair import loads_lenient
from datasolver.llm.messages import user_message

if TYPE_CHECKING:
    from datasolver.llm.client import LLMClient

# Votes must differ to be worth counting; a little sampling noise does that.
VOTE_TEMPERATURE = 0.7
MAX_DESCRIPTION_CHARS = 600


@dataclass
class VoteTally:
    """Per-item counts over all votes: `relevant` includes failed votes (a failure keeps an item)."""

    relevant: dict[str, int] = field(default_factory=dict)
    irrelevant: dict[str, int] = field(default_factory=dict)
    failed_votes: int = 0
    errors: list[str] = field(default_factory=list)

    def decide(self) -> dict[str, bool]:
        """Majority per item; a tie counts as relevant."""
        return {name: self.relevant[name] >= self.irrelevant[name] for name in self.relevant}


def parse_vote(content: str, names: Sequence[str]) -> set[str] | None:
    """The item names one vote marked relevant, or None when the answer is unusable.

    Names are matched exactly, then case- and space-insensitively; unknown names are ignored.
    """
    data: Any = loads_lenient(content or "")
    if isinstance(data, dict):
        data = data.get("relevant")
    if not isinstance(data, list):
        return None
    loose = {"".join(n.split()).lower(): n for n in names}
    chosen: set[str] = set()
    for item in data:
        if not isinstance(item, str):
            continue
        if item in names:
            chosen.add(item)
        elif (hit := loose.get("".join(item.split()).lower())) is not None:
            chosen.add(hit)
    return chosen


async def tally_votes(
    llm: LLMClient,
    question: str,
    items: list[tuple[str, str]],
    votes: int = DEFAULT_VOTES,
    *,
    kind: str = "tables",
    temperature: float | None = VOTE_TEMPERATURE,
    enable_thinking: bool | None = False,
) -> VoteTally:
    """Run `votes` parallel votes over `items` ((name, description) pairs) and count them.

    `tally.decide()` is the per-item majority (ties and failed votes → relevant). An empty item
    list needs no model call.
    """
    if not items:
        return VoteTally()
    if votes < 1:
        raise ValueError(f"votes must be >= 1, got {votes}")
    names = [name for name, _ in items]
    if len(set(names)) != len(names):
        raise ValueError("item names must be unique")
    listing = "\n".join(
        f"- {name}: {' '.join(desc.split())[:MAX_DESCRIPTION_CHARS]}" for name, desc in items
    )
    prompt = render_prompt("vote", question=question, count=len(items), kind=kind, items=listing)
    overrides: dict[str, Any] = {} if temperature is None else {"temperature": temperature}

    async def one() -> set[str] | str:
        try:
            result = await llm.chat([user_message(prompt)], enable_thinking=enable_thinking, **overrides)
        except LLMError as exc:
            return f"{type(exc).__name__}: {exc}"
        chosen = parse_vote(result.content, names)
        return chosen if chosen is not None else f"unusable answer: {result.content[:120]!r}"

    tally = VoteTally({n: 0 for n in names}, {n: 0 for n in names})
    for outcome in await asyncio.gather(*(one() for _ in range(votes))):
        if isinstance(outcome, str):
            tally.failed_votes += 1
            tally.errors.append(outcome)
            for n in names:
                tally.relevant[n] += 1
            continue
        for n in names:
            if n in outcome:
                tally.relevant[n] += 1
            else:
                tally.irrelevant[n] += 1
    return tally

