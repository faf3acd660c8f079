"""The documents room's prompt files (`prompts/docs_*.md`)."""

from __future__ import annotations

from datasolver.docs.errors import DocError
from datasolver.prompts import PROMPTS_DIR, PromptFiles


class PromptError(DocError):
    """A prompt file is missing, or a placeholder was left unfilled or given but unused."""


_FILES = PromptFiles("docs_", PromptError)
placeholders = _FILES.placeholders
render_prompt = _FILES.render

__all__ = ["PROMPTS_DIR", "PromptError", "placeholders", "render_prompt"]
