"""Every limit and switch of the analyst in one place."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AskLimits:
    """Budgets of one question. Results stay in DuckDB; these bound what enters the prompt."""

    max_requests: int = 16
    """Model requests for one question (the reviewer's and the forced final answer included)."""
    answer_rows: int = 20
    """Longest list an answer spells out; longer results are answered through a {DATA} template."""
    render_rows: int = 30
    """Most rows one `render` shows the model."""
    sample_rows: int = 3
    """Rows shown with each new result."""
    knowledge_chars: int = 6000
    """knowledge.md beyond this many characters is cut in the prompt."""
    table_list_chars: int = 8000
    """The table list in the prompt is cut here; list_tables shows it whole."""
    tool_result_chars: int = 6000
    """Any single tool answer is cut here."""
    query_timeout_s: float = 60.0
    """Each query (and the table loads it needs) is interrupted after this many seconds."""

    def __post_init__(self) -> None:
        for name in ("max_requests", "answer_rows", "render_rows", "sample_rows"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.query_timeout_s <= 0:
            raise ValueError("query_timeout_s must be positive")


@dataclass(frozen=True)
class AskConfig:
    """How one question is answered."""

    limits: AskLimits = field(default_factory=AskLimits)
    review: bool = False
    """Reviewer pass (off by default until the golden set shows it helps)."""
    enable_thinking: bool | None = None
    """Per-request thinking switch for Qwen-style servers; None leaves the server default."""
    temperature: float = 0.0
