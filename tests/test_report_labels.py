"""The report's plots never clip or overlap a label, whatever the numbers and task names.

Each `<text>` of each plot is measured with a real font's advance widths (DejaVu Sans, the sans-serif
font Chromium uses on these machines, through Pillow; CJK characters a full em, as CJK fonts draw
them) and must lie inside the plot's viewBox; the names under the bars must not overlap.
tests/test_report_browser.py checks the same in a headless Chromium where one is installed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from datasolver.report.load import RunView, TaskView
from datasolver.report.render import render_page
from datasolver.report.svg import LABEL_PX, TITLE_PX, bar_chart, text_width

FONTS = Path("/usr/share/fonts/truetype/dejavu")
TOKENS = [24_803, 1_234_567, 987_654_321, 5, 0]


def fonts():
    image_font = pytest.importorskip("PIL.ImageFont")
    if not (FONTS / "DejaVuSans.ttf").is_file():
        pytest.skip(f"no DejaVu Sans in {FONTS} (Debian package fonts-dejavu-core)")
    return {(size, bold): image_font.truetype(str(FONTS / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")), size)
            for size in (LABEL_PX, TITLE_PX) for bold in (False, True)}


def measured(text: str, size: int, bold: bool, table) -> float:
    ascii_part = "".join(c for c in text if c.isascii())
    return table[(size, bold)].getlength(ascii_part) + size * sum(1 for c in text if not c.isascii())


def plots(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in re.findall(r'<svg class="plot".*?</svg>', page, re.DOTALL)]


def extents(svg: ET.Element, table) -> list[tuple[str, float, float, float]]:
    """(text, left, right, baseline) of every label, as drawn."""
    out = []
    for node in svg.iter("text"):
        size, bold = (TITLE_PX, True) if node.get("class") == "pt" else (LABEL_PX, False)
        width = measured(node.text or "", size, bold, table)
        x = float(node.get("x"))
        anchor = node.get("text-anchor", "start")
        left = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
        out.append((node.text or "", left, left + width, float(node.get("y"))))
    return out


def check_plot(svg: ET.Element, table) -> None:
    _, _, width, height = map(float, svg.get("viewBox").split())
    labels = extents(svg, table)
    for text, left, right, y in labels:
        assert 0 <= left and right <= width, f"{text!r} spans {left:.1f}..{right:.1f} of 0..{width:.0f}"
        assert 0 < y <= height
    under = sorted((left, right, text) for text, left, right, y in labels if y > height - 20)
    for (_, right, a), (left, _, b) in zip(under, under[1:]):
        assert right <= left, f"{a!r} and {b!r} overlap"


def run_with(tokens: list[int], names: list[str]) -> RunView:
    tasks = [TaskView(name, status="solved", tokens=t, seconds=t / 97.0, requests_per_attempt=[t % 40 + 1])
             for name, t in zip(names, tokens)]
    return RunView(logs_dir="logs", summary={"model": "m"}, tasks=tasks)


def test_the_token_plots_value_labels_fit_whatever_the_numbers():
    table = fonts()
    page = render_page(run_with(TOKENS, [f"task_{i}" for i in range(len(TOKENS))]))
    drawn = plots(page)
    assert len(drawn) == 3
    tokens_plot = next(p for p in drawn if p.find("title").text.startswith("Tokens per task"))
    assert [t for t, *_ in extents(tokens_plot, table)][1:3] == ["987,654,321", "0"]  # the top and the base
    for svg in drawn:
        check_plot(svg, table)


@pytest.mark.parametrize("names", [
    [f"task_{'x' * 60}_{i}" for i in range(5)],                     # long ids
    [f"任务_销售_{i:04d}" for i in range(12)],                        # CJK ids, a full em each
    [f"task_{i:04d}" for i in range(400)],                          # a competition-sized run
])
def test_names_under_the_bars_never_overlap_or_leave_the_plot(names):
    table = fonts()
    tokens = [(i * 7919) % 50_000 + 1 for i in range(len(names))]
    for svg in plots(render_page(run_with(tokens, names))):
        check_plot(svg, table)


def test_every_label_of_a_histogram_is_kept_and_fits():
    table = fonts()
    bins = [f"{i / 10:.1f}" for i in range(11)]
    svg = ET.fromstring(bar_chart(bins, [3, 0, 1, 2, 12_345, 0, 0, 1, 0, 4, 400], "Score histogram", every_label=True))
    check_plot(svg, table)
    assert [t for t, *_ in extents(svg, table) if t in bins] == bins


def test_the_estimate_is_never_narrower_than_the_font():
    table = fonts()
    samples = ["987,654,321", "task_demo_weather", "WWWWMMMM", "iiiilll", "Tokens per task (most first)",
               "#+<=>^~&%@", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz0123456789_-."]
    for text in samples:
        for size, bold in ((LABEL_PX, False), (TITLE_PX, True)):
            assert text_width(text, size, bold=bold) >= measured(text, size, bold, table), (text, size, bold)


@pytest.mark.slow
def test_in_a_real_browser_every_plot_label_is_inside_its_plot(tmp_path):
    from tests.helpers.browser import DevTools, find_chromium

    if find_chromium() is None:
        pytest.skip("no chromium on PATH (apt-get install chromium)")
    names = [f"task_{'x' * 30}_{i}" for i in range(3)] + [f"任务_销售_{i:04d}" for i in range(30)]
    tokens = TOKENS + [(i * 7919) % 50_000 for i in range(len(names) - len(TOKENS))]
    page = tmp_path / "report.html"
    page.write_text(render_page(run_with(tokens, names)), encoding="utf-8")
    # Per plot: the labels' boxes as drawn, and the plot's own box (client pixels).
    measure = """Array.from(document.querySelectorAll('svg.plot')).map(svg => {
        const box = svg.getBoundingClientRect();
        return {box: [box.left, box.right, box.top, box.bottom], labels: Array.from(svg.querySelectorAll('text'))
          .map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.left, r.right, r.top, r.bottom]; })};
    })"""
    with DevTools(page.resolve().as_uri()) as browser:
        drawn = browser.evaluate(measure)
    assert len(drawn) == 3
    for plot in drawn:
        left, right, top, bottom = plot["box"]
        for text, x0, x1, y0, y1 in plot["labels"]:
            assert left <= x0 and x1 <= right and top <= y0 and y1 <= bottom, (text, x0, x1, plot["box"])
        under = sorted((x0, x1, text) for text, x0, x1, y0, y1 in plot["labels"] if y1 > bottom - 20)
        for (_, end, a), (start, _, b) in zip(under, under[1:]):
            assert end <= start, f"{a!r} and {b!r} overlap"
