"""PDF path: ruled tables (also across pages), running headers/footers dropped, paragraphs
joined across page breaks. The PDF is generated inside the test with fpdf2."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.documents.errors import DocumentSkipped
from datasolver.documents.pdf import extract_pdf
from datasolver.documents.reflow import Line, PageLines, is_page_number, join_lines, reflow, strip_running_lines

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

fpdf = pytest.importorskip("fpdf")

CLOSING = "The closing paragraph runs on across the page break and must come back as one paragraph"


def make_pdf(path: Path) -> Path:
    """Three sections: prose + a small ruled table, prose crossing a page, a 70-row table over pages."""

    class Doc(fpdf.FPDF):
        def header(self) -> None:
            self.set_font("Helvetica", size=9)
            self.cell(0, 8, "ACME Holdings - Annual Fact Sheet", align="C")
            self.ln(12)

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Helvetica", size=9)
            self.cell(0, 10, f"Page {self.page_no()}", align="C")

    pdf = Doc(format="A4")
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", size=16)
    pdf.cell(0, 10, "Regional offices", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "This report lists the regional offices with head count and revenue. " * 3)
    pdf.ln(4)
    with pdf.table(col_widths=(40, 30, 30)) as table:
        for row in [("office", "staff", "revenue"), ("Berlin", "120", "45.5"), ("Lyon", "80", "30.25"), ("Oslo", "15", "")]:
            cells = table.row()
            for c in row:
                cells.cell(c)
    pdf.ln(4)
    pdf.multi_cell(0, 6, " ".join([CLOSING] * 45) + ".")
    pdf.add_page()
    pdf.set_font("Helvetica", "B", size=16)
    pdf.cell(0, 10, "Branch ledger", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=11)
    with pdf.table(col_widths=(40, 30)) as table:  # fpdf2 repeats the heading row on each page
        cells = table.row()
        cells.cell("branch")
        cells.cell("amount")
        for i in range(70):
            cells = table.row()
            cells.cell(f"B{i:03d}")
            cells.cell(str(i * 10))
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def pdf_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pdf(tmp_path_factory.mktemp("pdf") / "offices.pdf")


def test_ruled_tables_are_extracted_exactly(pdf_path: Path) -> None:
    result = extract_pdf(pdf_path)
    offices, ledger = result.tables
    assert offices.columns == ["office", "staff", "revenue"]
    assert offices.rows == [["Berlin", "120", "45.5"], ["Lyon", "80", "30.25"], ["Oslo", "15", ""]]
    assert (offices.location, offices.method) == ("page 1", "pdf-table")
    # Continued over three pages, repeated heading rows dropped.
    assert ledger.columns == ["branch", "amount"]
    assert len(ledger.rows) == 70 and ledger.rows[0] == ["B000", "0"] and ledger.rows[-1] == ["B069", "690"]
    assert ledger.location.startswith("pages 3-")


def test_headers_footers_removed_and_paragraph_joined_across_pages(pdf_path: Path) -> None:
    result = extract_pdf(pdf_path)
    assert "ACME Holdings" not in result.text and "Page 2" not in result.text
    assert "ACME Holdings - Annual Fact Sheet" in result.removed
    closing = [line for line in result.text_lines if line[0].startswith(CLOSING)]
    assert len(closing) == 1
    text, first, last = closing[0]
    assert (first, last) == (1, 2) and text.endswith("one paragraph.")
    assert "## Regional offices" in result.text  # larger font → heading
    assert "Berlin" not in result.text  # table cells are not repeated as prose


def test_not_a_pdf_is_skipped(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"this is not a pdf")
    with pytest.raises(DocumentSkipped, match="not a readable PDF"):
        extract_pdf(bad)


@pytest.mark.parametrize(
    ("a", "b", "joined"),
    [
        ("营业收入为", "120亿元。", "营业收入为120亿元。"),
        ("the hyphen-", "ated word", "the hyphenated word"),
        ("a well-", "Known case", "a well- Known case"),
        ("plain", "words", "plain words"),
    ],
)
def test_join_lines(a: str, b: str, joined: str) -> None:
    assert join_lines(a, b) == joined


@pytest.mark.parametrize("text", ["3", "- 3 -", "Page 3 of 9", "3/9", "第 3 页", "第3页 共9页"])
def test_page_numbers(text: str) -> None:
    assert is_page_number(text)


def test_running_lines_and_cross_page_reflow_on_synthetic_lines() -> None:
    def page(n: int, body: list[str]) -> PageLines:
        lines = [Line("Company report", 200, 400, 20, 30, 9)]
        lines += [Line(t, 50, 545, 100 + 14 * i, 111 + 14 * i, 11) for i, t in enumerate(body)]
        lines.append(Line(str(n), 290, 300, 800, 810, 9))
        return PageLines(n, 595, 842, lines)

    pages = [page(1, ["第一段的开头，这一行没有结束", "而是继续写到"]), page(2, ["下一页才结束。", "Another line."])]
    cleaned, removed = strip_running_lines(pages)
    assert removed == ["Company report", "1", "Company report", "2"]
    paragraphs = reflow(cleaned)
    assert paragraphs[0].text == "第一段的开头，这一行没有结束而是继续写到下一页才结束。Another line."
    assert (paragraphs[0].first_page, paragraphs[0].last_page) == (1, 2)
