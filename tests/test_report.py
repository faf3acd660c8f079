"""`datasolver report`: the page's content, escaping, partial traces, unknown events (no browser)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.report import write_report
from datasolver.report.load import load_run
from datasolver.report.render import render_page
from datasolver.report.highlight import highlight_python, highlight_sql, sql_in_solver
from datasolver.report.render import event_html
from tests.helpers.samplerun import HOSTILE_QUESTION, HOSTILE_RESULT, write_sample_run


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("sample")
    logs, gold = write_sample_run(root, tasks=12)
    return logs, gold


def test_the_page_has_every_task_its_score_status_and_final_sql(sample, tmp_path):
    logs, gold = sample
    result = CliRunner().invoke(cli, ["report", str(logs), "--gold", str(gold), "--predictions",
                                      str(logs.parent / "output"), "--output", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    run = load_run(logs, gold, logs.parent / "output")
    assert len(run.tasks) == 12
    for task in run.tasks:
        assert f">{task.task_id}</a>" in page
    finished = [t for t in run.tasks if not t.unfinished]
    assert all(t.score is not None for t in run.tasks if t.status != "failed" or t.prediction is None)
    for task in finished:
        assert f"{task.task_id} · <span class=\"st-{task.status}\">{task.status}</span> · score {task.score.score:.2f}" \
            in page
    assert page.count('<span class="k">GROUP</span> <span class="k">BY</span> region') == len(finished)
    mean = sum(t.score.score for t in run.scored) / len(run.scored)
    assert f"mean score<b>{mean:.3f}</b>" in page


def test_gold_columns_are_marked_matched_missed_or_extra(sample):
    logs, gold = sample
    run = load_run(logs, gold, logs.parent / "output")
    wrong = next(t for t in run.tasks if t.score is not None and 0 < t.score.score < 1)
    page = render_page(run)
    section = page[page.index(f'{wrong.task_id} · <span'):]
    section = section[: section.index('<details class="task"')] if '<details class="task"' in section else section
    assert '<td class="matched">region</td><td>matched</td>' in section
    assert '<td class="missed">amount</td><td>missed</td>' in section
    assert '<td class="extra">extra_id</td><td>extra</td>' in section


def test_untrusted_text_never_becomes_markup(sample):
    logs, gold = sample
    page = render_page(load_run(logs, gold, logs.parent / "output"))
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=" in page
    # Only our own script block exists.
    assert page.count("<script>") == 1
    assert HOSTILE_QUESTION and HOSTILE_RESULT


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_the_page_references_nothing_outside_itself(sample):
    page = render_page(load_run(*sample, sample[0].parent / "output"))
    parser = _Tags()
    parser.feed(page)
    tags = parser.tags
    assert {t for t, _ in tags} >= {"html", "table", "details", "svg", "script", "style"}
    links = [(t, a) for t, a in tags for name in ("src", "href", "action", "srcset", "data", "poster") if name in a]
    assert links and all(t == "a" and a["href"].startswith("#") for t, a in links)
    assert [a for t, a in tags if t == "script"] == [{}]  # inline only
    assert not [t for t, _ in tags if t in ("link", "img", "iframe", "object", "embed", "base", "form")]
    assert not re.search(r"https?://", page)
    assert "@import" not in page and "url(" not in page
    csp = [a["content"] for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and csp[0].startswith("default-src 'none';") and "connect-src" not in csp[0]


def test_a_killed_task_renders_what_its_trace_holds_and_is_marked(sample):
    logs, _ = sample
    run = load_run(logs)
    killed = run.tasks[-1]
    assert killed.unfinished and killed.damaged_lines == 1 and killed.status == "unfinished"
    assert killed.requests > 0 and killed.tokens > 0
    page = render_page(run)
    assert "damaged trace: 1 unreadable line(s)" in page
    assert "trace ends before the task did (killed run?)" in page
    assert "finished: False" in page


def test_unknown_event_kinds_are_rendered_with_their_fields():
    html = event_html({"event": "vote_cast", "seq": 3, "voters": 3, "winner": "<a>", "detail": "x\ny"}, 700)
    assert '<span class="kind">vote_cast</span> voters=3 winner=&lt;a&gt;' in html
    assert "<b>detail</b><pre>x\ny</pre>" in html
    check = event_html({"event": "answer_check", "ok": False, "check": "extra columns"}, 700)
    assert "ev-bad" in check


def test_long_fields_are_trimmed_with_a_note():
    html = event_html({"event": "tool_result", "name": "explore_data", "content": "a" * 5000}, 700)
    assert "a" * 700 + "\n… (4300 more characters cut; the trace has them all)" in html


def test_highlighters_escape_and_mark_tokens():
    sql = highlight_sql("SELECT \"名 <x>\", COUNT(*) FROM t WHERE a = 'it''s' -- <b>\n")
    assert sql.startswith('<span class="k">SELECT</span> <span class="q">"名 &lt;x&gt;"</span>')
    assert '<span class="s">\'it\'\'s\'</span>' in sql and '<span class="c">-- &lt;b&gt;</span>' in sql
    py = highlight_python('def f(x):\n    return run_sql("""<SELECT>""")  # </pre>\n')
    assert '<span class="k">def</span>' in py and '<span class="c"># &lt;/pre&gt;</span>' in py
    assert '<span class="s">"""&lt;SELECT&gt;"""</span>' in py
    code = '# use run_sql("""SELECT ...""")\nresult = run_sql("""\nSELECT 1\n""")\nrun_sql(\'\'\'SELECT 2\'\'\')'
    assert sql_in_solver(code) == ["SELECT 1", "SELECT 2"]


@pytest.mark.slow
def test_a_run_with_report_writes_the_page_at_the_end(tmp_path):
    from datasolver.examples.scripted import load_answers, solver_handler
    from datasolver.llm.fake import SCRIPTED_BASE_URL
    from tests.helpers.askcli import cli_model

    examples = Path(__file__).resolve().parents[1] / "src" / "datasolver" / "examples"
    answers = load_answers(examples / "solutions.json", examples / "input")
    with cli_model(handler=solver_handler(answers)):
        result = CliRunner().invoke(cli, [
            "run", str(examples / "input"), str(tmp_path / "out"), "--logs", str(tmp_path / "logs"),
            "--api-url", SCRIPTED_BASE_URL, "--model", "scripted", "--tasks", "task_demo_sales", "--report"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "logs" / "report.html").read_text(encoding="utf-8")
    assert f"report: {tmp_path / 'logs' / 'report.html'}" in result.output
    assert ">task_demo_sales</a>" in page and '<span class="k">JOIN</span> products' in page
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["model"] == "scripted" and "base_url" not in json.dumps(summary["settings"])


def test_report_refuses_a_missing_folder(tmp_path):
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert write_report  # the library call is the CLI's only work
