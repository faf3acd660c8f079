import json

import pytest

from datasolver.data import TaskError, discover_tasks, load_task
from tests.helpers.datafiles import write_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_discovery_natural_order_and_defaults(tmp_path):
    for n in (10, 2, 1):
        write_task(tmp_path, f"task_{n}", spec={"question": f"q{n}"})
    (tmp_path / "not_a_task").mkdir()
    found = discover_tasks(tmp_path)
    assert [t.task_id for t in found.tasks] == ["task_1", "task_2", "task_10"]  # task_id defaults to folder
    assert found.tasks[0].difficulty is None
    assert found.errors == []


def test_malformed_tasks_are_reported_and_others_continue(tmp_path):
    write_task(tmp_path, "task_1", spec={"question": "ok?", "difficulty": "hard"})
    write_task(tmp_path, "task_2", spec={"question": "   "})
    write_task(tmp_path, "task_3", spec={"task_id": "task_3"})
    (tmp_path / "task_4").mkdir()
    (tmp_path / "task_4" / "task.json").write_text("{broken", encoding="utf-8")
    (tmp_path / "task_5").mkdir()  # no task.json at all
    found = discover_tasks(tmp_path)
    assert [t.task_id for t in found.tasks] == ["task_1"]
    assert found.tasks[0].difficulty == "hard"
    reasons = {path.name: msg for path, msg in found.errors}
    assert set(reasons) == {"task_2", "task_3", "task_4", "task_5"}
    assert "question" in reasons["task_2"] and "question" in reasons["task_3"]
    assert "JSON" in reasons["task_4"]
    assert "no task.json" in reasons["task_5"]


def test_load_task_rejects_missing_question(tmp_path):
    task = write_task(tmp_path, spec={"task_id": "x"})
    with pytest.raises(TaskError, match="'question' is required"):
        load_task(task)


def test_context_files_in_folders_and_loose(tmp_path):
    task = write_task(
        tmp_path,
        files={
            "csv/a.csv": "x\n1\n",
            "loose.csv": "y\n2\n",
            "json/b.json": "[]",
            "db/c.sqlite3": b"",
            "doc/report.md": "# r",
            "doc/scan.pdf": b"%PDF",
            "video/briefing.mp4": b"",
            "knowledge.md": "# k",
            "notes.bin": b"\x00",
        },
    )
    files = load_task(task).context_files()
    rel = files.relative
    assert [rel(p) for p in files.csv] == ["csv/a.csv", "loose.csv"]
    assert [rel(p) for p in files.json] == ["json/b.json"]
    assert [rel(p) for p in files.db] == ["db/c.sqlite3"]
    assert [rel(p) for p in files.doc] == ["doc/report.md", "doc/scan.pdf"]
    assert [rel(p) for p in files.video] == ["video/briefing.mp4"]
    assert files.knowledge is not None and files.knowledge.name == "knowledge.md"
    assert [rel(p) for p in files.other] == ["notes.bin"]
    assert load_task(task).knowledge() == "# k"


def test_task_json_with_bom_is_read(tmp_path):
    task = tmp_path / "task_7"
    task.mkdir()
    (task / "task.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"question": "问"}).encode())
    assert load_task(task).question == "问"
