"""Load the Solver's prompt files (`prompts/solver_*.md`) and fill their `{{name}}` placeholders."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from datasolver.agent.errors import PromptError

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
PREFIX = "solver_"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """The raw text of `prompts/solver_<name>.md`."""
    path = PROMPTS_DIR / f"{PREFIX}{name}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"prompt file {path} is missing ({exc})") from exc


def placeholders(name: str) -> set[str]:
    """The placeholder names a prompt file uses."""
    return set(_PLACEHOLDER.findall(template(name)))


def template_names() -> list[str]:
    """Every solver prompt, by short name (`rules`, `task`, …)."""
    return sorted(p.stem[len(PREFIX):] for p in PROMPTS_DIR.glob(f"{PREFIX}*.md"))


def render_prompt(name: str, **values: object) -> str:
    """`prompts/solver_<name>.md` with every `{{key}}` replaced; all must be given, none extra."""
    wanted = placeholders(name)
    missing, extra = wanted - set(values), set(values) - wanted
    if missing or extra:
        raise PromptError(
            f"prompt {PREFIX}{name}.md: missing values {sorted(missing)}, unused values {sorted(extra)}"
        )
    # One pass, so a value that itself contains `{{x}}` (knowledge.md might) is never expanded.
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template(name))
