"""The structurizer's output for one document (plain data, so it can be cached as JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Structured:
    """A table built from prose, plus where each value came from (kept apart from the table)."""

    columns: list[str]
    rows: list[list[str]]
    key: str
    provenance: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    worker_calls: int = 0
