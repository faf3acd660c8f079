"""Prompt files of the ask room: present, every placeholder filled, none left over."""

from __future__ import annotations

import pytest

from datasolver.errors import PromptError
from datasolver.ask.prompts import PROMPTS_DIR, placeholders, render_prompt

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

NAMES = sorted(p.stem.removeprefix("ask_") for p in PROMPTS_DIR.glob("ask_*.md"))


def test_the_expected_prompts_exist() -> None:
    assert NAMES == ["direct", "direct_repair", "direct_system", "empty_result", "empty_unchanged", "finish_now",
                     "mcp_instructions", "non_answer", "query_first", "question", "review", "sent_back",
                     "stray_values", "system", "use_final_answer", "written_query_run"]


@pytest.mark.parametrize("name", NAMES)
def test_every_placeholder_is_filled(name: str) -> None:
    values = {key: f"<{key}>" for key in placeholders(name)}
    text = render_prompt(name, **values)
    assert "{{" not in text and all(f"<{key}>" in text for key in values)


def test_missing_or_extra_values_are_refused() -> None:
    with pytest.raises(PromptError, match=r"missing values \['feedback'\]"):
        render_prompt("sent_back")
    with pytest.raises(PromptError, match=r"unused values \['oops'\]"):
        render_prompt("finish_now", oops=1)


def test_values_are_not_expanded_twice() -> None:
    assert "{{feedback}}" in render_prompt("sent_back", feedback="{{feedback}}")
