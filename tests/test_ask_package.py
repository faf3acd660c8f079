"""Opening a data folder for asking: plain folders, task folders, documents, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.ask import open_package
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

REPORT = """# Quarterly report

Some words about the quarter.

| city | visitors |
|------|----------|
| Oslo | 120 |
| Bergen | 80 |
"""


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_documents_of_a_plain_folder_become_tables_without_writing_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "report.md").write_text(REPORT, encoding="utf-8")
    (data / "sales.csv").write_text("a\n1\n", encoding="utf-8")
    before = listing(data)
    with open_package(data, cache_dir=tmp_path / "cache") as package:
        names = package.catalog.names()
        assert "sales" in names
        doc = next(n for n in names if n.startswith("report"))
        assert package.catalog.query(f'SELECT sum(visitors) FROM "{doc}"').rows == [(200,)]
        assert package.task_question is None
    assert listing(data) == before
    assert list((tmp_path / "cache").iterdir()) == []  # the temporary folder went with the package


def test_task_folder_gives_its_question_and_knowledge(tmp_path: Path) -> None:
    task = write_task(tmp_path, question="How many?", files={"csv/t.csv": "a\n1\n", "knowledge.md": "a is a count."})
    with open_package(task, cache_dir=tmp_path / "cache") as package:
        assert (package.task_question, package.knowledge, package.catalog.names()) == ("How many?", "a is a count.", ["t"])
