"""Hostile task folders and logs folders: no write leaves the output and logs folders, none follows a link.

Attacks measured before the fix (issue 22): a task.json with `"task_id": "../in/task_evil/hook"`
and a shipped `hook/trace.jsonl -> ~/.bashrc` made `datasolver run` append the trace line to
.bashrc (absolute ids worked too); `datasolver report LOGS` wrote the page through a
`LOGS/report.html.partial` link (run_summary.json and the replay summary the same way); `datasolver
docs TASK` wrote a PDF's text through `derived/text/report.md -> ~/.ssh/authorized_keys`; two
folders with one task_id shared scratch, logs and output, the second answer replacing the first.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver import safe_write
from datasolver.cli import cli
from datasolver.data import discover_tasks, load_task
from datasolver.data.errors import TaskError
from datasolver.llm import TraceWriter
from datasolver.llm.fake import SCRIPTED_BASE_URL
from datasolver.pipeline.replay import ReplaySummary, write_replay_summary
from datasolver.pipeline.summary import RunSummary, write_summary
from datasolver.report import write_report
from tests.helpers.samplerun import write_sample_run
from datasolver.solver.publish import publish_prediction
from tests.helpers.pipeline import copy_examples, examples_cli_model, snapshot

SHELL_LINE = "$(touch /tmp/pwned)"


def _task(folder: Path, task_id: object, question: str = SHELL_LINE) -> Path:
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({"task_id": task_id, "question": question}), encoding="utf-8")
    (folder / "context").mkdir()
    (folder / "context" / "a.csv").write_text("x\n1\n", encoding="utf-8")
    return folder


def _everything(root: Path, *, but: tuple[Path, ...]) -> dict[str, str]:
    """snapshot() of `root` without the folders the program may write (links listed, not followed)."""
    state = snapshot(root)
    skip = [str(p.relative_to(root)) for p in but]
    return {k: v for k, v in state.items() if not any(k == s or k.startswith(s + os.sep) for s in skip)}


# -- ids ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("task_id", [
    "../in/task_evil/hook", "/etc/cron.d/x", "a/b", ".", "..", "", "task\n", "task\x1b[2J", "x" * 129,
    "é" * 65,
])
def test_an_id_that_cannot_name_one_folder_is_an_error_for_that_task(tmp_path, task_id):
    _task(tmp_path / "task_evil", task_id)
    if task_id == "":  # an empty id falls back to the folder name, which is a fine id
        assert load_task(tmp_path / "task_evil").task_id == "task_evil"
        return
    with pytest.raises(TaskError, match="task_id"):
        load_task(tmp_path / "task_evil")
    found = discover_tasks(tmp_path)
    assert found.tasks == [] and len(found.errors) == 1 and "task_id" in found.errors[0][1]


def test_a_good_id_of_word_characters_dots_and_dashes_is_kept(tmp_path):
    _task(tmp_path / "task_1", "Task-1.v2_公司")
    assert load_task(tmp_path / "task_1").task_id == "Task-1.v2_公司"


def test_ids_that_name_the_same_folder_are_all_errors_and_the_others_run(tmp_path):
    _task(tmp_path / "task_a", "task_Dup")
    _task(tmp_path / "task_b", "task_dup")          # the same folder on a case-insensitive disk
    _task(tmp_path / "task_c", "task_\ud55c")        # NFC (a Hangul syllable)
    _task(tmp_path / "task_d", "task_\u1112\u1161\u11ab")  # NFD of the same name (jamo)
    _task(tmp_path / "task_e", "task_fine")
    found = discover_tasks(tmp_path)
    assert [t.task_id for t in found.tasks] == ["task_fine"]
    reasons = {path.name: reason for path, reason in found.errors}
    assert sorted(reasons) == ["task_a", "task_b", "task_c", "task_d"]
    assert "task_b" in reasons["task_a"] and "task_a" in reasons["task_b"]
    assert "none of them is run" in reasons["task_c"]


def test_the_traversal_attack_through_the_cli_writes_nothing_outside_output_and_logs(tmp_path):
    """The issue's critical attack, with absolute ids and duplicate ids beside it, through `datasolver run`."""
    home = tmp_path / "home"
    home.mkdir()
    bashrc = home / ".bashrc"
    bashrc.write_text("# my shell\n", encoding="utf-8")
    input_dir = copy_examples(tmp_path)
    evil = _task(input_dir / "task_evil", "../input/task_evil/hook")
    (evil / "hook").mkdir()
    (evil / "hook" / "trace.jsonl").symlink_to(bashrc)
    _task(input_dir / "task_abs", str(home / "abs"))
    _task(input_dir / "task_dup1", "task_demo_sales")  # the same id as an example task
    out, logs, scratch = tmp_path / "out", tmp_path / "logs", tmp_path / "scratch"
    elsewhere = home / "elsewhere"
    elsewhere.mkdir()
    logs.mkdir()
    (logs / "task_demo_library").symlink_to(elsewhere, target_is_directory=True)  # a shipped logs folder
    before = _everything(tmp_path, but=(out, logs, scratch))
    with examples_cli_model():
        result = CliRunner().invoke(cli, [
            "run", str(input_dir), str(out), "--api-url", SCRIPTED_BASE_URL, "--model", "fake-model",
            "--logs", str(logs), "--scratch", str(scratch), "--no-doc-llm", "--workers", "2",
        ])
    assert result.exit_code == 0, result.output
    assert bashrc.read_text(encoding="utf-8") == "# my shell\n"
    assert not (home / "abs").exists()
    assert _everything(tmp_path, but=(out, logs, scratch)) == before
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    errors = {Path(e["folder"]).name: e["reason"] for e in summary["discovery_errors"]}
    assert "cannot name a folder" in errors["task_evil"] and "cannot name a folder" in errors["task_abs"]
    assert "none of them is run" in errors["task_dup1"] and "none of them is run" in errors["task_demo_sales"]
    records = {r["task_id"]: r for r in summary["tasks"]}
    assert sorted(records) == ["task_demo_library", "task_demo_weather"]
    assert records["task_demo_weather"]["status"] == "solved"
    assert records["task_demo_library"]["status"] == "failed"
    assert records["task_demo_library"]["reason"] == (
        f"{logs / 'task_demo_library'} is a symlink or not a folder; refusing to write through it "
        "(remove it, or choose another folder)")
    assert list(elsewhere.iterdir()) == []
    for root in (out, scratch):  # nothing written there leads out either (scratch: context links only)
        for path in root.rglob("*"):
            assert not path.is_symlink() or root == scratch, path


def test_a_trace_writer_never_leaves_its_logs_folder_even_with_a_bad_id(tmp_path):
    logs = tmp_path / "logs"
    for bad in ("../escape", str(tmp_path / "abs")):
        with pytest.raises(safe_write.UnsafeWrite):
            TraceWriter(logs, task_id=bad).event("task_start", question=SHELL_LINE)
    assert not (tmp_path / "escape").exists() and not (tmp_path / "abs").exists()


# -- no write through a link ---------------------------------------------------------------------------

def test_a_trace_is_never_appended_through_a_link_or_to_a_fifo(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n", encoding="utf-8")
    logs = tmp_path / "logs"
    (logs / "t1").mkdir(parents=True)
    (logs / "t1" / "trace.jsonl").symlink_to(victim)
    with pytest.raises(safe_write.UnsafeWrite, match="symlink"):
        TraceWriter(logs, task_id="t1").event("task_start", question=SHELL_LINE)
    (logs / "t2").mkdir()
    os.mkfifo(logs / "t2" / "trace.jsonl")
    with pytest.raises(safe_write.UnsafeWrite, match="not a regular file"):  # and no hang
        TraceWriter(logs, task_id="t2").event("task_start")
    (logs / "t3").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(safe_write.UnsafeWrite, match="symlink or not a folder"):
        TraceWriter(logs, task_id="t3").event("task_start")
    assert victim.read_text(encoding="utf-8") == "keep\n" and list((tmp_path / "elsewhere").iterdir()) == []
    writer = TraceWriter(logs, task_id="t4")
    writer.event("a")
    writer.event("b")
    assert [e["event"] for e in writer.read()] == ["a", "b"]


def test_report_summary_and_replay_summary_replace_a_link_instead_of_writing_through_it(tmp_path):
    logs, _ = write_sample_run(tmp_path, tasks=2)
    victim = tmp_path / "victim.pth"
    for name in ("report.html", "report.html.partial", "run_summary.json.partial"):
        (logs / name).symlink_to(victim)  # the old code wrote through the `.partial` one
    page = write_report(logs)
    assert not victim.exists()
    assert page == logs / "report.html" and not page.is_symlink() and "<html" in page.read_text(encoding="utf-8")
    (logs / "run_summary.json").unlink()
    (logs / "run_summary.json").symlink_to(victim)
    write_summary(RunSummary(input_dir="i", output_dir="o", logs_dir=str(logs), model="m", workers=1,
                             task_timeout_s=1.0, time_budget_s=None), logs / "run_summary.json")
    assert not victim.exists() and not (logs / "run_summary.json").is_symlink()
    (logs / "replay_summary.json.partial").symlink_to(victim)
    (logs / "replay_summary.json").symlink_to(victim)
    write_replay_summary(ReplaySummary("r", "i", "o", "l", None), logs / "replay_summary.json")
    assert not victim.exists() and not (logs / "replay_summary.json").is_symlink()
    assert [p.name for p in logs.iterdir() if p.name.endswith(".tmp")] == []


def test_a_report_folder_chain_with_a_link_is_refused_with_a_clear_error(tmp_path):
    logs, _ = write_sample_run(tmp_path, tasks=1)
    (tmp_path / "elsewhere").mkdir()
    (logs / "pages").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(safe_write.UnsafeWrite, match="pages is a symlink or not a folder"):
        safe_write.write_file(logs / "pages" / "r.html", "x", base=logs)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_publish_refuses_a_linked_task_folder_and_replaces_a_linked_prediction(tmp_path):
    source = tmp_path / "prediction.csv"
    source.write_text("a\n1\n", encoding="utf-8")
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    out.mkdir()
    (out / "task_1").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(safe_write.UnsafeWrite):
        publish_prediction(source, out, "task_1")
    assert list(elsewhere.iterdir()) == []
    (out / "task_2").mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep", encoding="utf-8")
    (out / "task_2" / "prediction.csv").symlink_to(victim)
    published = publish_prediction(source, out, "task_2")
    assert published.read_text(encoding="utf-8") == "a\n1\n" and not published.is_symlink()
    assert victim.read_text(encoding="utf-8") == "keep"


def _pdf(path: Path, text: str) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for line in text.splitlines():
        pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def test_docs_replaces_shipped_links_in_derived_and_refuses_a_linked_derived(tmp_path):
    keys = tmp_path / "authorized_keys"
    keys.write_text("ssh-ed25519 AAAA mine\n", encoding="utf-8")
    task = tmp_path / "task_x"
    (task / "context" / "doc").mkdir(parents=True)
    _pdf(task / "context" / "doc" / "report.pdf", "ssh-ed25519 AAAA attacker\n" + "Plain prose for people. " * 8)
    (task / "derived" / "text").mkdir(parents=True)
    (task / "derived" / "text" / "report.md").symlink_to(keys)
    result = CliRunner().invoke(cli, ["docs", str(task)])
    assert result.exit_code == 0, result.output
    assert keys.read_text(encoding="utf-8") == "ssh-ed25519 AAAA mine\n"
    text = task / "derived" / "text" / "report.md"
    assert not text.is_symlink() and "attacker" in text.read_text(encoding="utf-8")
    # a derived/ that is itself a link: refused, nothing written through it
    other = tmp_path / "task_y"
    (other / "context" / "doc").mkdir(parents=True)
    _pdf(other / "context" / "doc" / "report.pdf", "Plain prose for people. " * 8)
    (tmp_path / "ssh").mkdir()
    (other / "derived").symlink_to(tmp_path / "ssh", target_is_directory=True)
    result = CliRunner().invoke(cli, ["docs", str(other)])
    assert result.exit_code == 1
    assert "derived is a symlink or not a folder; refusing to write through it" in result.output
    assert list((tmp_path / "ssh").iterdir()) == []


def test_a_document_name_longer_than_the_file_system_allows_is_cut_not_fatal(tmp_path):
    task = tmp_path / "task_x"
    (task / "context" / "doc").mkdir(parents=True)
    long_stem = "1" + "é" * 124 + "x"          # 251 bytes; `t_` and `.md` take it past 255
    (task / "context" / "doc" / f"{long_stem}.md").write_text("| a | b |\n|---|---|\n| 1 | 2 |\n", encoding="utf-8")
    (task / "context" / "doc" / "other.md").write_text("| c |\n|---|\n| 3 |\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["docs", str(task)])
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (task / "derived").glob("*.csv"))
    assert len(files) == 2 and "other.csv" in files
    assert all(len(name.encode("utf-8")) <= safe_write.NAME_MAX - safe_write.SIBLING_ROOM for name in files)


def test_fit_name_cuts_whole_characters_and_keeps_long_names_apart():
    a, b = "公" * 120 + "a", "公" * 120 + "b"
    fa, fb = safe_write.fit_name(a, ".csv"), safe_write.fit_name(b, ".csv")
    assert fa != fb and fa.endswith(".csv")
    assert len(fa.encode("utf-8")) <= safe_write.NAME_MAX - safe_write.SIBLING_ROOM
    fa.encode("utf-8").decode("utf-8")  # no half character
    assert safe_write.fit_name("short", ".csv") == "short.csv"


def test_a_write_is_replaced_whole_and_keeps_the_usual_permissions(tmp_path):
    path = safe_write.write_file(tmp_path / "a" / "b.txt", "hello", base=tmp_path)
    mode = stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert path.read_text() == "hello" and mode == 0o666 & ~umask
    with pytest.raises(safe_write.UnsafeWrite, match="leads out"):
        safe_write.write_file(tmp_path / "a" / ".." / ".." / "x", "no", base=tmp_path / "a")


def test_the_video_pass_refuses_a_linked_derived_folder(tmp_path):
    from datasolver.video.outputs import place

    scratch = tmp_path / "task_v"
    for folder in ("context", "workdir"):
        (scratch / folder).mkdir(parents=True)
    (scratch / "task.json").write_text("{}", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (scratch / "derived").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(safe_write.UnsafeWrite, match="derived is a symlink"):
        place(scratch)
    assert list((tmp_path / "elsewhere").iterdir()) == []
