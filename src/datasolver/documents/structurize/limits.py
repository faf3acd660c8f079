"""All knobs of the LLM structurizer in one place."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StructurizeLimits:
    """Sizes, retries and concurrency of the structurizer (characters, not tokens: ~1-2 chars/token)."""

    max_plan_chars: int = 24_000
    """A document up to this size goes whole to the planner; a longer one as an outline of parts."""
    max_part_chars: int = 12_000
    """Each worker reads one part of at most this size (sections are packed or split to fit)."""
    max_knowledge_chars: int = 8_000
    max_ids_per_call: int = 80
    """A worker fills at most this many record ids per call (more ids → several calls)."""
    plan_retries: int = 2
    part_retries: int = 2
    concurrency: int = 4
    normalize: bool = True
    normalize_timeout_s: float = 5.0
    enable_thinking: bool | None = None
    """None keeps the client's setting."""
