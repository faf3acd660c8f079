"""All knobs of the LLM structurizer in one place."""

from __future__ import annotations

from dataclasses import dataclass

from datasolver.settings import check_settings, count, seconds, switch


@dataclass(frozen=True)
class StructurizeLimits:
    """Sizes, retries and concurrency of the structurizer (characters, not tokens: ~1-2 chars/token)."""

    max_plan_chars: int = count(24_000, "a document up to this size goes whole to the planner; a longer one as "
                                "an outline of parts")
    max_part_chars: int = count(12_000, "each worker reads one part of at most this size (sections are packed "
                                "or split to fit)")
    max_knowledge_chars: int = count(8_000, "knowledge.md (the naming anchor) beyond this is cut in the "
                                     "planner's prompt")
    max_ids_per_call: int = count(80, "a worker fills at most this many record ids per call (more ids → several "
                                  "calls)")
    plan_retries: int = count(2, "planner calls retried after an unusable answer", least=0)
    part_retries: int = count(2, "worker calls retried after an unusable answer, per part", least=0)
    concurrency: int = count(4, "worker calls at once")
    normalize: bool = switch(True, "let the model write a normalizer for messy value columns (run in the "
                             "sandbox)")
    normalize_timeout_s: float = seconds(5.0, "wall-clock limit of one normalizer run (the whole tree is killed)")
    enable_thinking: bool | None = switch(None, "thinking switch of the structurizer's requests; None keeps the "
                                          "client's setting", optional=True)

    def __post_init__(self) -> None:
        check_settings(self)
