"""`datasolver docs`: output lines, the --out form, and errors as `Error: …` with exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

TABLE = "| city | staff |\n|---|---|\n| Berlin | 120 |\n| Lyon | 80 |\n"


def test_docs_on_a_task_scratch_dir_without_a_model(tmp_path: Path) -> None:
    doc = tmp_path / "task" / "context" / "doc"
    doc.mkdir(parents=True)
    (doc / "offices.md").write_text("# Offices\n\n" + TABLE, encoding="utf-8")
    result = CliRunner().invoke(cli, ["docs", str(tmp_path / "task"), "--no-llm"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "offices  rows      2  markdown-table  doc/offices.md lines 3-6",
        f"1 document table(s) written, 0 document(s) skipped in {tmp_path / 'task' / 'derived'}",
    ]


def test_docs_without_a_model_configured_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("Narrative only. " * 20, encoding="utf-8")
    result = CliRunner().invoke(cli, ["docs", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("note: no model configured (")
    assert lines[1] == "skipped: notes.md: no table found (narrative text; configure a model to structure it)"


def test_docs_on_a_plain_folder_needs_out(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["docs", str(tmp_path), "--no-llm"])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path} has no context/ folder; give --out DIR to extract a plain folder\n"
