"""Docs that mirror code are generated from it or checked against it."""

from __future__ import annotations

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


def _settings_blocks() -> list[tuple[str, str, str]]:
    """(doc, class name, table written) of every generated settings table in docs/."""
    from datasolver.cli.reference import settings_blocks

    return [(doc.name, name, table) for doc in sorted(DOCS.glob("*.md"))
            for name, table in settings_blocks(doc.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("doc, name, written", _settings_blocks(),
                         ids=[f"{doc}:{name}" for doc, name, _ in _settings_blocks()])
def test_a_settings_table_is_its_class_as_the_code_says(doc, name, written):
    from datasolver.cli.reference import SETTINGS_CLASSES, SETTINGS_COMMAND
    from datasolver.settings import settings_table

    assert name in SETTINGS_CLASSES, f"{doc}: no settings class {name}"
    assert written == settings_table(SETTINGS_CLASSES[name]), (
        f"{doc}: the {name} table is out of date: run `{SETTINGS_COMMAND}`")


def test_every_settings_class_has_its_table_in_the_docs():
    from datasolver.cli.reference import SETTINGS_CLASSES

    shown = {name for _, name, _ in _settings_blocks()}
    assert set(SETTINGS_CLASSES) - shown == set()


def test_every_settings_dataclass_is_known_to_the_reference():
    # A new `…Limits`, `…Settings`, `…Config`, `…Options` or `…Policy` dataclass gets its table too.
    from datasolver.cli.reference import SETTINGS_CLASSES

    pattern = re.compile(r"^@dataclass[^\n]*\nclass (\w+(?:Limits|Settings|Config|Options|Policy))\b", re.MULTILINE)
    found = {name for path in SRC.rglob("*.py") for name in pattern.findall(path.read_text(encoding="utf-8"))}
    assert found and found - set(SETTINGS_CLASSES) == set()


def test_no_settings_table_is_written_by_hand():
    # A table headed `| setting | default |` (or `| field | default |`) is one the code makes.
    from datasolver.cli.reference import SETTINGS_BLOCK

    for doc in sorted([*DOCS.glob("*.md"), README]):
        outside = SETTINGS_BLOCK.sub("", doc.read_text(encoding="utf-8"))
        assert not re.search(r"^\| *`?(setting|field)`? *\| *default *\|", outside, re.MULTILINE | re.IGNORECASE), (
            f"{doc.name}: a hand-written settings table; put it between <!-- settings: Class --> markers")


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


# docs/models.md still holds the real-model run's figures (to move to benchmarks/README.md).
FIGURES_ALLOWED: set[str] = set()


def test_measured_figures_live_in_the_benchmarks_readme():
    # User docs say what the program does; a run's figures (a section of them, or the load of the
    # machine a run was timed on) go to benchmarks/README.md, which the docs link to.
    assert (README.parent / "benchmarks" / "README.md").is_file()
    for doc in [*sorted(DOCS.glob("*.md")), README]:
        if doc.name in FIGURES_ALLOWED:
            continue
        text = doc.read_text(encoding="utf-8")
        heading = re.search(r"^#+ .*\b(measured|benchmarks?|costs)\b.*$", text, re.MULTILINE | re.IGNORECASE)
        assert heading is None, f"{doc.name}: {heading.group(0)!r}: measurements go to benchmarks/README.md"
        assert "load average" not in text, f"{doc.name}: a timed run's figures go to benchmarks/README.md"
