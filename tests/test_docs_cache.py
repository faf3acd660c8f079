"""The document cache (issue 26, item 1): a raw folder's document tables are extracted once, outside
the input, under the names the agent's prepare path gives them; every command sees the same tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.ask import open_package
from datasolver.cli import cli
from datasolver.data import Catalog, ScratchLayout
from datasolver.documents.cache import CACHE_ENV, NOT_EXTRACTED, document_tables
from datasolver.pipeline.documents import prepare_task_documents
from datasolver.solver.prepare import prepare_task
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

FARES = "# Fares\n\nPrices by class.\n\n| fare_id | class | price |\n|---|---|---|\n| 1 | Y | 120 |\n| 2 | J | 480 |\n"
NARRATIVE = "# Notes\n\n" + "The fares were collected in spring from the carriers' public price lists. " * 3 + "\n"


def _task(tmp_path: Path) -> Path:
    return write_task(tmp_path / "in", files={
        "csv/flight.csv": "flight_id,fare_id\n10,1\n11,2\n12,2\n",
        "doc/fare.md": FARES,
        "doc/fare (copy).md": FARES.replace("120", "130"),
        "doc/notes.md": NARRATIVE,
        "knowledge.md": "| column | meaning |\n|---|---|\n| price | dollars |\n",
    })


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


def _tables(task: Path, *args: str) -> list[str]:
    result = CliRunner().invoke(cli, ["tables", *args, str(task)])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_tables_lists_document_tables_and_names_the_unread_document_without_writing_the_input(tmp_path: Path) -> None:
    task = _task(tmp_path)
    before = _snapshot(task)
    lines = _tables(task)
    assert [line.split()[:3] for line in lines[:3]] == [
        ["flight", "rows", "3"], ["fare__copy_", "rows", "2"], ["fare", "rows", "2"]]
    assert lines[2].endswith("derived/fare.csv  aliases: df_fare  origin: doc/fare.md lines 5-8")
    assert lines[3:] == [
        "unread document: doc/notes.md: no table found (narrative text; configure a model to structure it)"]
    assert _snapshot(task) == before


def test_the_cache_is_reused_and_renewed_when_a_document_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    task = _task(tmp_path)
    with document_tables(task) as first:
        assert not first.reused and first.derived is not None
        assert first.derived.is_relative_to(tmp_path / "cache")
    with document_tables(task) as again:
        assert again.reused and again.derived == first.derived
        assert [d.source for d in again.unread] == ["doc/notes.md"]
    (task / "context" / "doc" / "fare.md").write_text(FARES.replace("480", "500"), encoding="utf-8")
    with document_tables(task) as changed:
        assert not changed.reused and changed.derived != first.derived
        with Catalog.open(task, extra_derived=changed.extra_derived) as catalog:
            assert catalog.query("SELECT max(price) FROM fare").rows == [(500,)]
    assert not first.derived.exists()  # the folder's older entry is gone
    assert [p.name for p in changed.derived.parent.iterdir()] == [changed.derived.name]


def test_commands_and_the_agent_see_the_same_tables(tmp_path: Path) -> None:
    task = _task(tmp_path)
    scratch = prepare_task(task, tmp_path / "scratch")
    prepare_task_documents(ScratchLayout.of(scratch))  # the agent's path: no model, derived/ in the scratch copy
    with Catalog.open(scratch) as catalog:
        agent = [(i.name, i.rows) for i in catalog.tables()]
    listed = [tuple(line.split()[:3:2]) for line in _tables(task) if " rows " in line]
    assert [(name, int(rows)) for name, rows in listed] == agent
    with open_package(task, cache_dir=tmp_path / "c") as package:
        assert package.catalog.names() == [name for name, _ in agent]
        assert "document doc/notes.md: no table found (narrative text; configure a model to structure it)" in package.notes
    # A prepared scratch copy is listed from its own derived/, once.
    assert [line.split()[0] for line in _tables(scratch) if " rows " in line] == [name for name, _ in agent]


def test_no_load_reads_documents_only_from_the_cache(tmp_path: Path) -> None:
    task = _task(tmp_path)
    lines = _tables(task, "--no-load")
    assert [line.split()[0] for line in lines if " rows " in line] == ["flight"]
    assert lines[1:] == [f"unread document: doc/{name}: {NOT_EXTRACTED}" for name in ("fare (copy).md", "fare.md", "notes.md")]
    _tables(task)  # extracts into the cache
    assert [line.split()[0] for line in _tables(task, "--no-load") if " rows " in line] == ["flight", "fare__copy_", "fare"]


def test_cache_off_extracts_into_a_temporary_folder_removed_on_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "unused"))
    task = _task(tmp_path)
    with document_tables(task, cache="off") as docs:
        tmp = docs.derived
        assert tmp is not None and (tmp / "fare.csv").is_file()
    assert not tmp.exists() and not (tmp_path / "unused").exists()
    assert [line.split()[0] for line in _tables(task, "--doc-cache", "off") if " rows " in line] == ["flight", "fare__copy_", "fare"]


@pytest.mark.parametrize("linked", ["root", "folder"])
def test_a_link_in_the_cache_is_never_followed(tmp_path: Path, linked: str) -> None:
    task = _task(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cache = tmp_path / "cache"
    if linked == "root":
        cache.symlink_to(elsewhere)
    else:
        with document_tables(task, cache=cache) as docs:  # learn the folder key, then plant a link there
            folder = docs.derived.parent
        for child in folder.iterdir():
            os.rename(child, elsewhere / child.name)
        folder.rmdir()
        folder.symlink_to(elsewhere)
    planted = sorted(p.name for p in elsewhere.iterdir())
    with document_tables(task, cache=cache) as docs:
        link = cache if linked == "root" else folder
        assert docs.notes == [f"document cache: {link} is not a plain folder (a link is never followed); "
                              "tables extracted into a temporary folder"]
        assert docs.derived is not None and not docs.derived.is_relative_to(elsewhere)
        with Catalog.open(task, extra_derived=docs.extra_derived) as catalog:
            assert catalog.query("SELECT count(*) FROM fare").rows == [(2,)]
    assert sorted(p.name for p in elsewhere.iterdir()) == planted


def test_a_damaged_entry_is_made_again(tmp_path: Path) -> None:
    task = _task(tmp_path)
    with document_tables(task, cache=tmp_path / "cache") as docs:
        entry = docs.derived
    (entry / "manifest.json").unlink()
    with document_tables(task, cache=tmp_path / "cache") as docs:
        assert not docs.reused and docs.derived == entry and (entry / "manifest.json").is_file()


def test_a_cache_that_cannot_be_written_falls_back_to_a_temporary_folder(tmp_path: Path) -> None:
    task = _task(tmp_path)
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    with document_tables(task, cache=tmp_path / "file" / "cache") as docs:
        assert len(docs.notes) == 1 and docs.notes[0].startswith(f"document cache {tmp_path / 'file' / 'cache'} is not writable (")
        assert docs.derived is not None and (docs.derived / "fare.csv").is_file()
        tmp = docs.derived
    assert not tmp.exists()
