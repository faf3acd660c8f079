"""Hostile logs folders (`datasolver report`, `replay`) and hostile text on the terminal.

Attacks measured before the fix (issue 22): a trace line nested 100,000 deep crashed `report` and
`replay` with a RecursionError traceback; `report --gold` read and showed whatever file the
summary named as a prediction; terminal escape sequences in cells, task ids and names were printed
raw by `sql`, `tables` and the progress lines.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.llm import read_trace
from datasolver.llm.replay import exchanges_from_events
from datasolver.pipeline.replay import last_run
from datasolver.pipeline.replay_compare import first_divergence, make_normalizer
from datasolver.report import write_report
from datasolver.report.load import load_run
from datasolver.report.render import render_page
from tests.helpers.samplerun import write_sample_run
from datasolver.terminal import printable

DEEP = "[" * 100_000 + "]" * 100_000
JUST_UNDER = "[" * 990 + "]" * 990  # json.loads takes it; a recursive reader of it would not
HOSTILE_VALUES = [None, True, -1, 10 ** 400, 1e308, "", "x\x1b[2J", [], {}, [1, [2, [3]]],
                  {"a": {"b": None}}, "9" * 50, [{"x": 1}] * 3, {"": ""}]


@pytest.fixture
def run_logs(tmp_path):
    logs, gold = write_sample_run(tmp_path, tasks=3, result_chars=200)
    return logs, gold


def test_a_deeply_nested_or_huge_trace_line_is_a_note_not_a_traceback(run_logs, tmp_path):
    logs, gold = run_logs
    trace = logs / "task_0001" / "trace.jsonl"
    good = trace.read_text(encoding="utf-8")
    trace.write_text(DEEP + "\n" + JUST_UNDER + "\n" + "[1,2]\n" + good, encoding="utf-8")
    notes: list[str] = []
    events, damaged = read_trace(trace, notes)
    assert damaged == 3 and events
    assert "line 1: nested deeper than" in notes[0] and "line 2: nested deeper than" in notes[1]
    assert "line 3: a JSON list where an object belongs" in notes[2]
    (logs / "run_summary.json").write_text(DEEP, encoding="utf-8")
    result = CliRunner().invoke(cli, ["report", str(logs), "--output", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "run_summary.json is unreadable (" in page and "nested deeper than" in page
    assert "line 1: nested deeper than" in page


def test_an_over_long_trace_line_is_skipped_without_being_held(tmp_path, monkeypatch):
    from datasolver import untrusted_json

    monkeypatch.setattr(untrusted_json, "MAX_LINE_BYTES", 1000)
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"event": "a"}\n' + '{"x": "' + "y" * 5000 + '"}\n{"event": "b"}\n', encoding="utf-8")
    notes: list[str] = []
    events, damaged = read_trace(trace, notes)
    assert [e["event"] for e in events] == ["a", "b"] and damaged == 1
    assert notes == ["line 2: longer than 1000 bytes; skipped"]


def test_a_trace_that_is_a_fifo_or_a_link_is_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo.jsonl")
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"event": "secret"}\n', encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(secret)
    for name, why in (("fifo.jsonl", "not a regular file"), ("link.jsonl", "symlink")):
        notes: list[str] = []
        assert read_trace(tmp_path / name, notes) == ([], 0)  # and no hang
        assert why in notes[0]


SHAPES = [{"a": {"b": None}}, [1, [2, [3]]], "x\x1b[2J", 10 ** 400]


def _mutations(events: list[dict]):
    """Every hostile value in every field at once, then each field alone with each odd shape."""
    keys = sorted({k for e in events for k in e if k != "event"})
    for value in HOSTILE_VALUES:
        yield "*", value, [{**e, **{k: value for k in e if k != "event"}} for e in events]
    for key in keys:
        for value in SHAPES:
            yield key, value, [{**e, key: value} if key in e else e for e in events]


def test_report_and_replay_survive_any_json_value_in_any_trace_field(run_logs):
    logs, gold = run_logs
    trace = logs / "task_0001" / "trace.jsonl"  # (task_0002's trace ends in a cut line: a killed run)
    events = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines() if line.strip()]
    normalize = make_normalizer([str(logs)])
    tried = 0
    for key, value, mutated in _mutations(events):
        trace.write_text("".join(json.dumps(e) + "\n" for e in mutated), encoding="utf-8")
        render_page(load_run(logs))  # (gold reads no trace field)
        recorded = last_run(read_trace(trace)[0])
        exchanges_from_events(recorded)
        first_divergence(recorded, last_run(events), normalize)
        first_divergence(last_run(events), recorded, normalize)
        tried += 1
    assert tried > 50


def test_report_survives_any_json_value_in_any_summary_field(run_logs):
    logs, gold = run_logs
    path = logs / "run_summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    for value in HOSTILE_VALUES:
        path.write_text(json.dumps({k: value for k in summary}), encoding="utf-8")
        render_page(load_run(logs, gold, logs.parent / "output"))
        tasks = [{k: value for k in r} for r in summary["tasks"]]
        path.write_text(json.dumps({**summary, "tasks": tasks}), encoding="utf-8")
        render_page(load_run(logs, gold, logs.parent / "output"))
    for key in sorted(summary):
        for value in SHAPES:
            path.write_text(json.dumps({**summary, key: value}), encoding="utf-8")
            render_page(load_run(logs))
    for key in sorted({k for r in summary["tasks"] for k in r}):
        for value in SHAPES:
            tasks = [{**r, key: value} for r in summary["tasks"]]
            path.write_text(json.dumps({**summary, "tasks": tasks}), encoding="utf-8")
            render_page(load_run(logs))
    for whole in ("[]", "3", '"x"', "null", DEEP):
        path.write_text(whole, encoding="utf-8")
        render_page(load_run(logs, gold))


# -- report --gold reads predictions only where it was told ----------------------------------------

def test_report_gold_reads_predictions_only_under_the_folder_given(run_logs, tmp_path):
    logs, gold = run_logs
    output = logs.parent / "output"
    secret = tmp_path / "secret.csv"
    secret.write_text("region,amount\nTOPSECRET,1\n", encoding="utf-8")
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    for record in summary["tasks"]:
        record["prediction"] = str(secret)  # the summary names a file outside
    summary["output_dir"] = str(tmp_path)
    (logs / "run_summary.json").write_text(json.dumps(summary), encoding="utf-8")
    for trace in logs.glob("*/trace.jsonl"):  # and so does every task_end
        lines = [json.loads(x) for x in trace.read_text(encoding="utf-8").splitlines() if x.strip().endswith("}")]
        for e in lines:
            if e.get("event") == "task_end":
                e["prediction"] = str(secret)
        trace.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    (output / "task_0001" / "prediction.csv").unlink()
    (output / "task_0001" / "prediction.csv").symlink_to(secret)  # a link under the right folder
    page = write_report(logs, gold_dir=gold, predictions_dir=output).read_text(encoding="utf-8")
    assert "TOPSECRET" not in page
    run = load_run(logs, gold, predictions_dir=output)
    assert run.tasks[1].score is not None and run.tasks[1].score.score == 0.0  # the link is no prediction
    assert run.tasks[1].score.reason == "missing prediction"
    assert run.tasks[2].score is not None and run.tasks[2].score.score > 0
    # without --predictions, the summary's output_dir is not trusted: no prediction is read at all
    page = render_page(load_run(logs, gold))
    assert "TOPSECRET" not in page and "pass --predictions" in page


def test_report_gold_cli_takes_the_predictions_folder(run_logs, tmp_path):
    logs, gold = run_logs
    result = CliRunner().invoke(cli, ["report", str(logs), "--gold", str(gold), "--predictions",
                                      str(logs.parent / "output"), "--output", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    assert "mean score<b>" in (tmp_path / "r.html").read_text(encoding="utf-8")


# -- the terminal ------------------------------------------------------------------------------------

def test_printable_makes_control_characters_and_escapes_visible():
    assert printable("a\x1b[2Jb\x07c\rd\x9b31m") == "a\\x1b[2Jb\\x07c\\rd\\x9b31m"
    assert printable("tab\tand\nnewline") == "tab\\tand\\nnewline"
    assert printable("tab\tand\nnewline", keep_newlines=True) == "tab\\tand\nnewline"
    assert printable("公司 ü ok") == "公司 ü ok"
    assert printable("\u202eevil\u2066") == "\\u202eevil\\u2066"  # bidirectional overrides


def test_sql_and_tables_print_no_raw_escape_sequence(tmp_path):
    task = tmp_path / "task_x"
    (task / "context").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_x", "question": "q"}), encoding="utf-8")
    (task / "context" / "t\x1b[31mred.csv").write_text('name\n"\x1b]0;pwned\x07\x1b[2J"\n', encoding="utf-8")
    for args in (["sql", str(task), "SELECT * FROM t__31mred"], ["tables", str(task)],
                 ["sql", str(task), "SELECT * FROM \"t\x1b[31mred\""]):
        result = CliRunner().invoke(cli, args)
        assert "\x1b" not in result.output and "\x07" not in result.output, (args, result.output)
    result = CliRunner().invoke(cli, ["sql", str(task), "SELECT * FROM t__31mred"])
    assert "\\x1b]0;pwned" in result.output


def test_progress_lines_print_no_raw_escape_sequence():
    import io

    from datasolver.pipeline.progress import LogProgress
    from datasolver.pipeline.summary import TaskRecord

    out = io.StringIO()
    progress = LogProgress(stream=out)
    progress.start(1, 0)
    progress.task_started("task\x1b[2J", "solve")
    progress.task_finished(TaskRecord("task\x1b[2J", "failed", reason="boom\x1b]0;x\x07"))
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
    assert "task\\x1b[2J" in out.getvalue()


def test_a_summary_task_id_that_is_a_path_reads_no_trace_outside(run_logs, tmp_path):
    logs, _ = run_logs
    outside = logs.parent.parent / f"outside-{tmp_path.name}"  # where ../../<that> leads from logs/
    outside.mkdir()
    (outside / "trace.jsonl").write_text(json.dumps({"event": "task_start", "question": "MARKER-OUTSIDE"}) + "\n")
    path = logs / "run_summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary["tasks"].append({"task_id": f"../../{outside.name}", "status": "solved"})
    path.write_text(json.dumps(summary), encoding="utf-8")
    page = render_page(load_run(logs))
    assert "MARKER-OUTSIDE" not in page and "are not folder names; their traces are not read" in page
