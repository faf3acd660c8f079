"""The Solver's prompt files (`prompts/solver_*.md`)."""

from __future__ import annotations

from datasolver.prompts import PROMPTS_DIR, PromptFiles

PREFIX = "solver_"
_FILES = PromptFiles(PREFIX)
template = _FILES.template
placeholders = _FILES.placeholders
template_names = _FILES.names
render_prompt = _FILES.render

__all__ = ["PREFIX", "PROMPTS_DIR", "placeholders", "render_prompt", "template", "template_names"]
