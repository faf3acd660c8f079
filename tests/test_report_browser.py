"""The report in a real headless Chromium: rendered DOM, a screenshot, sorting and filtering.

Skipped (with the reason) when no Chromium is installed; CI installs the Debian package.
"""

from __future__ import annotations

import struct

import pytest

from datasolver.report import write_report
from datasolver.report.load import load_run
from tests.helpers.samplerun import write_sample_run
from tests.helpers.browser import DevTools, dump_dom, find_chromium, screenshot

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(find_chromium() is None, reason="no chromium on PATH (apt-get install chromium)")]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    logs, gold = write_sample_run(root, tasks=12)
    return (write_report(logs, gold_dir=gold, predictions_dir=root / "output"),
            load_run(logs, gold, root / "output"), root)


def test_the_rendered_dom_shows_every_task_score_sql_and_gold_diff(report):
    page, run, root = report
    dom = dump_dom(page, root)
    # The script ran (the filter bar is shown only by it) and counted the rows.
    assert '<div id="filters" class="filters">' in dom
    assert "12 of 12 shown" in dom
    for task in run.tasks:
        assert f">{task.task_id}</a>" in dom
        if task.score is not None:
            assert f"score {task.score.score:.2f}" in dom
    assert dom.count('<span class="k">GROUP</span> <span class="k">BY</span> region') == 11
    assert '<td class="missed">amount</td><td>missed</td>' in dom
    assert '<td class="extra">extra_id</td><td>extra</td>' in dom
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in dom


def test_a_screenshot_is_a_real_rendering(report, tmp_path):
    page, _, root = report
    png = screenshot(page, tmp_path / "report.png", root, size=(1000, 1100))
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 1100)
    from PIL import Image

    with Image.open(png) as image:
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    # Text, cards, bars and the status colours: a blank or error page has a handful of colours.
    assert colors is not None and len(colors) > 200
    rgb = {c for _, c in colors}
    assert (0x54, 0xAE, 0xFF) in rgb  # the plots' bars
    assert (0x1A, 0x7F, 0x37) in rgb  # the green of "solved" in the tasks table


def test_sorting_and_filtering_work_in_the_browser(report):
    page, run, _ = report
    ids = "Array.from(document.querySelectorAll('#tasks tbody tr')).filter(r => !r.hidden).map(r => r.cells[0].getAttribute('data-v'))"
    with DevTools(page.resolve().as_uri()) as browser:
        assert browser.evaluate("window.__pwned === undefined") is True
        assert browser.evaluate(ids) == [t.task_id for t in run.tasks]
        # Click "seconds" twice: ascending, then descending.
        seconds = "Array.from(document.querySelectorAll('#tasks th')).find(h => h.textContent === 'seconds')"
        browser.evaluate(f"{seconds}.click()")
        ascending = [t.task_id for t in sorted(run.tasks, key=lambda t: t.seconds)]
        assert browser.evaluate(ids) == ascending
        browser.evaluate(f"{seconds}.click()")
        assert browser.evaluate(ids) == ascending[::-1]
        assert browser.evaluate(f"{seconds}.getAttribute('aria-sort')") == "descending"
        # Filter by status, then by a score range.
        browser.evaluate("var s = document.getElementById('f-status'); s.value = 'fallback';"
                         "s.dispatchEvent(new Event('change'))")
        fallback = {t.task_id for t in run.tasks if t.status == "fallback"}
        assert fallback and set(browser.evaluate(ids)) == fallback
        assert browser.evaluate("document.getElementById('f-shown').textContent") == f"{len(fallback)} of 12 shown"
        browser.evaluate("var s = document.getElementById('f-status'); s.value = '';"
                         "s.dispatchEvent(new Event('change'));"
                         "var m = document.getElementById('f-max'); m.value = '0.99';"
                         "m.dispatchEvent(new Event('input'))")
        low = {t.task_id for t in run.tasks if t.score is not None and t.score.score <= 0.99}
        assert low and set(browser.evaluate(ids)) == low
        assert browser.evaluate("window.__pwned === undefined") is True
