"""The documents room's prompt files (`prompts/documents_*.md`)."""

from __future__ import annotations

from datasolver.prompts import PROMPTS_DIR, PromptFiles

_FILES = PromptFiles("documents_")
placeholders = _FILES.placeholders
render_prompt = _FILES.render

__all__ = ["PROMPTS_DIR", "placeholders", "render_prompt"]
