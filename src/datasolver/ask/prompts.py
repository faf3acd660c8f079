"""Load the room's prompt files (`prompts/ask_*.md`) and fill their `{{name}}` placeholders."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from datasolver.ask.errors import PromptError

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@lru_cache(maxsize=None)
def _template(name: str) -> str:
    path = PROMPTS_DIR / f"ask_{name}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PromptError(f"prompt file {path} is missing ({exc})") from exc


def placeholders(name: str) -> set[str]:
    """The placeholder names a prompt file uses."""
    return set(_PLACEHOLDER.findall(_template(name)))


def render_prompt(name: str, **values: object) -> str:
    """`prompts/ask_<name>.md` with every `{{key}}` replaced; all must be given, none extra."""
    wanted = placeholders(name)
    missing, extra = wanted - set(values), set(values) - wanted
    if missing or extra:
        raise PromptError(f"prompt ask_{name}.md: missing values {sorted(missing)}, unused values {sorted(extra)}")
    # One pass, so a value that itself contains `{{x}}` (data, a question) is never expanded again.
    return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), _template(name))
