"""prepare_documents, deterministic path: files, manifest, idempotence, the input left alone, hints."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from datasolver.documents import document_table_hints, prepare_documents
from datasolver.documents.errors import DocError

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

OFFICES = """# 办公室一览

本文档列出各地办公室。

| 办公室 | 人数 | 收入 | 开业日期 |
|---|---|---|---|
| 柏林 | 120 | 45.5 | 2019-03-01 |
| 里昂 | 80 | 30.25 | 2020-07-15 |
| 奥斯陆 | 15 |  | 2021-01-04 |

注：空白单元格表示未提供。
"""

LEDGER = """Ledger export

| code | amount |
|---|---|
| 001 | 10 |
| 002 | 20 |

Second table, different header:

| region | head |
|---|---|
| north | Ann |
"""

KNOWLEDGE = """# 数据说明

| 字段 | 含义 |
|---|---|
| 人数 | 员工人数 |
"""


def make_task(root: Path) -> Path:
    task = root / "task_demo"
    doc = task / "context" / "doc"
    doc.mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_demo", "question": "柏林有多少人？"}), encoding="utf-8")
    (task / "context" / "knowledge.md").write_text(KNOWLEDGE, encoding="utf-8")
    (doc / "办公室(2021).md").write_text(OFFICES, encoding="utf-8")
    (doc / "ledger.txt").write_text(LEDGER, encoding="gb18030")
    (doc / "notes.md").write_text("Just a short note.\n", encoding="utf-8")
    return task


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_markdown_and_text_tables_are_written_with_a_manifest(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    before = snapshot(task / "context")
    report = prepare_documents(task)

    assert snapshot(task / "context") == before  # the input is never written
    assert [(t.table, t.name, t.rows, t.location) for t in report.tables] == [
        ("ledger_1", "ledger_1", 2, "lines 3-6"),  # documents in path order
        ("ledger_2", "ledger_2", 1, "lines 10-12"),
        ("办公室(2021)", "办公室_2021_", 3, "lines 5-9"),
    ]
    assert [(s.source, s.reason) for s in report.skipped] == [
        ("doc/notes.md", "no table and too little text to hold one")
    ]
    manifest = json.loads((task / "derived" / "manifest.json").read_text(encoding="utf-8"))
    first = manifest["tables"][2]
    assert {k: first[k] for k in ("file", "table", "source", "location", "method", "key")} == {
        "file": "办公室_2021_.csv",
        "table": "办公室(2021)",
        "source": "doc/办公室(2021).md",
        "location": "lines 5-9",
        "method": "markdown-table",
        "key": None,
    }
    # Plain CSV: the same type inference as any input CSV applies (here DuckDB's own reader).
    rel = duckdb.sql(f"SELECT * FROM read_csv('{task / 'derived' / first['file']}', sample_size=-1)")
    assert dict(zip(rel.columns, map(str, rel.types))) == {
        "办公室": "VARCHAR", "人数": "BIGINT", "收入": "DOUBLE", "开业日期": "DATE"
    }
    assert rel.fetchall()[2][2] is None  # a blank cell is NULL


def test_prepare_is_idempotent_and_removes_stale_files(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    prepare_documents(task)
    manifest = (task / "derived" / "manifest.json").read_text(encoding="utf-8")
    prepare_documents(task)
    assert (task / "derived" / "manifest.json").read_text(encoding="utf-8") == manifest

    (task / "context" / "doc" / "ledger.txt").unlink()
    report = prepare_documents(task)
    assert [t.table for t in report.tables] == ["办公室(2021)"]
    assert sorted(p.name for p in (task / "derived").glob("*.csv")) == ["办公室_2021_.csv"]


def test_same_stem_in_two_documents_gets_distinct_names(tmp_path: Path) -> None:
    src = tmp_path / "data"
    src.mkdir()
    (src / "sales.md").write_text("| a |\n|---|\n| 1 |\n", encoding="utf-8")
    (src / "sales.txt").write_text("| b |\n|---|\n| 2 |\n", encoding="utf-8")
    report = prepare_documents(src, src / "derived")  # out_dir inside the folder is not scanned
    assert [(t.table, t.source) for t in report.tables] == [("sales", "sales.md"), ("sales_2", "sales.txt")]
    again = prepare_documents(src, src / "derived")
    assert [t.table for t in again.tables] == ["sales", "sales_2"]


def test_pdf_documents_give_tables_and_a_text_file(tmp_path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    src = tmp_path / "data"
    src.mkdir()
    pdf = fpdf.FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Staff per office, as counted in December.")
    with pdf.table() as table:
        for row in [("office", "staff"), ("Berlin", "120"), ("Lyon", "80")]:
            cells = table.row()
            for c in row:
                cells.cell(c)
    pdf.output(str(src / "staff.pdf"))

    report = prepare_documents(src, tmp_path / "out")
    assert [(t.table, t.method, t.location, t.rows) for t in report.tables] == [("staff", "pdf-table", "page 1", 2)]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["documents"][0]["text"] == "text/staff.md"
    assert "Staff per office" in (tmp_path / "out" / "text" / "staff.md").read_text(encoding="utf-8")


def test_hints_list_each_document_table(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    assert document_table_hints(task) == ""  # nothing prepared yet
    prepare_documents(task)
    hints = document_table_hints(task).splitlines()
    assert hints[0].startswith("Document tables")
    assert len(hints) == 4
    assert hints[3] == (
        "- 办公室_2021_: 3 rows, from doc/办公室(2021).md (lines 5-9, Markdown table); "
        "columns: 办公室, 人数, 收入, 开业日期"
    )
    assert document_table_hints(task / "derived") == "\n".join(hints)


def test_a_table_described_elsewhere_gets_only_how_it_was_extracted(tmp_path: Path) -> None:
    task = make_task(tmp_path)
    prepare_documents(task)
    full = document_table_hints(task).splitlines()
    hints = document_table_hints(task, described=["办公室_2021_"]).splitlines()
    assert hints[3] == "- 办公室_2021_: Markdown table"  # rows, source, columns stand on its table line
    assert hints[:3] == full[:3]  # the others keep their full line


def test_a_task_without_context_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DocError, match="no context/ folder"):
        prepare_documents(tmp_path)


def test_catalog_registers_document_tables(tmp_path: Path) -> None:
    from datasolver.data import Catalog  # our own package: an ImportError fails the test
    task = make_task(tmp_path)
    prepare_documents(task)
    with Catalog.open(task) as catalog:
        info = catalog.table("办公室(2021)")
        assert info.name == "办公室_2021_"
        assert info.origin == "doc/办公室(2021).md lines 5-9"
        total = catalog.sql('SELECT sum("人数") AS n FROM "办公室(2021)"').df()["n"][0]
    assert total == 215


def test_the_sync_form_works_inside_a_running_event_loop_without_a_model(tmp_path: Path) -> None:
    import asyncio

    task = make_task(tmp_path)

    async def inside() -> list[str]:
        return [t.table for t in prepare_documents(task).tables]

    assert asyncio.run(inside()) == ["ledger_1", "ledger_2", "办公室(2021)"]
