"""Docs that mirror code are generated from it or checked against it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from datasolver.cli.reference import render_reference

DOCS = Path(__file__).resolve().parent.parent / "docs"
README = DOCS.parent / "README.md"
SRC = DOCS.parent / "src" / "datasolver"


def test_the_cli_reference_matches_every_commands_help():
    written = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert written == render_reference(), (
        "docs/cli.md is out of date: run `python -m datasolver.cli.reference docs/cli.md`")


def test_the_reference_has_every_command_and_every_run_flag():
    from datasolver.cli import COMMAND_MODULES
    from datasolver.cli.run_cmds import COMMANDS

    text = render_reference()
    for name in COMMAND_MODULES:
        assert f"## datasolver {name}\n" in text
    run = next(c for c in COMMANDS if c.name == "run")
    for param in run.params:
        for opt in param.opts:
            if opt.startswith("--"):
                assert opt in text, opt


def _table(doc: str, heading: str) -> dict[str, str]:
    """The `| `name` | default | … |` rows under a Markdown heading: name → default cell."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `([a-z_0-9]+)` \| ([^|]*) \|", section, re.MULTILINE)
    return {name: default.strip() for name, default in rows}


def _spelled(value: object) -> str:
    """How the docs write a default, thousands separators left out: 48000, None, False, 0.3."""
    return str(value)


SETTINGS_TABLES = [
    # (doc, heading, dataclass path, fields the table leaves out on purpose)
    ("agent.md", "## Limits", "datasolver.agent.limits:Limits", {"clock"}),
]


@pytest.mark.parametrize("doc, heading, target, left_out", SETTINGS_TABLES)
def test_a_settings_table_names_every_field_with_its_default(doc, heading, target, left_out):
    module, name = target.split(":")
    settings = getattr(__import__(module, fromlist=[name]), name)
    table = _table(doc, heading)
    fields = {f.name: f for f in dataclasses.fields(settings) if f.name not in left_out}
    assert set(table) == set(fields), f"{doc} {heading}: the table and {name}'s fields differ"
    for field_name, field in fields.items():
        assert table[field_name].replace(" ", "") == _spelled(field.default), (
            f"{doc} {heading}: `{field_name}` says {table[field_name]!r}, the code {field.default!r}")


def test_the_readme_lists_every_doc_and_every_room():
    readme = README.read_text(encoding="utf-8")
    for doc in sorted(DOCS.glob("*.md")):
        assert f"docs/{doc.name}" in readme, doc.name
    for room in sorted(p for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
        assert f"`{room.name}/`" in readme, room.name


def test_user_docs_point_only_inside_the_repo():
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        assert "../shared" not in text, f"{doc.name} points to ../shared, which a user's clone lacks"
        assert not re.search(r"\bthe issue\b", text), f"{doc.name} refers to 'the issue'"
