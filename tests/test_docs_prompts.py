"""The room's prompt files: every file is used, every placeholder must be filled, none extra."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from datasolver.documents.prompts import PROMPTS_DIR, placeholders, render_prompt
from datasolver.errors import PromptError

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

DOCS_SRC = Path(__file__).resolve().parents[1] / "src" / "datasolver" / "documents"


def prompt_names() -> list[str]:
    return sorted(p.stem.removeprefix("documents_") for p in PROMPTS_DIR.glob("documents_*.md"))


def test_every_prompt_file_is_rendered_somewhere_in_the_room() -> None:
    code = "\n".join(p.read_text(encoding="utf-8") for p in DOCS_SRC.rglob("*.py"))
    used = set(re.findall(r'render_prompt\(\s*"(\w+)"', code))
    assert used == set(prompt_names())


@pytest.mark.parametrize("name", prompt_names())
def test_placeholders_must_all_be_filled(name: str) -> None:
    wanted = placeholders(name)
    assert wanted, f"documents_{name}.md has no placeholder"
    filled = render_prompt(name, **{k: f"<{k}>" for k in wanted})
    assert "{{" not in filled
    missing_one = dict.fromkeys(sorted(wanted)[1:], "x")
    with pytest.raises(PromptError, match="missing values"):
        render_prompt(name, **missing_one)
    with pytest.raises(PromptError, match="unused values"):
        render_prompt(name, **{k: "x" for k in wanted}, surplus="x")


def test_a_value_is_not_expanded_twice() -> None:
    out = render_prompt("ids", document_name="{{part}}", record_id_column="id", part="P")
    assert "`{{part}}`" in out
