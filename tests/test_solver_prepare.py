"""prepare_task: the scratch layout, links into a read-only input, the scaffold, idempotence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from datasolver.data import ScratchLayout, TaskError
from datasolver.solver import restore_scaffold, write_scaffold
from datasolver.solver.prepare import prepare_task
from datasolver.data.errors import ScratchError
from datasolver.solver.scaffold import RESULT_LINE
from datasolver.solver.scaffold import NO_RESULT_MARKER, QUERY_AREA_END, QUERY_AREA_START, SAVE_BLOCK_START
from tests.helpers.solver import TINY_QUESTION, make_tiny_task


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def task_input(tmp_path: Path) -> Path:
    return make_tiny_task(tmp_path / "input")


def test_layout_and_links(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    assert root == (tmp_path / "scratch" / "task_tiny").resolve()
    assert json.loads((root / "task.json").read_text(encoding="utf-8"))["question"] == TINY_QUESTION
    assert (root / "workdir" / "solver.py").is_file() and (root / "tmp").is_dir()
    assert not (root / "workdir" / "prediction.csv").exists()
    orders = root / "context" / "csv" / "orders.csv"
    assert orders.is_symlink() and orders.resolve() == (task_input / "context" / "csv" / "orders.csv").resolve()
    assert (root / "context" / "csv").is_dir() and not (root / "context" / "csv").is_symlink()
    assert (root / "context" / "knowledge.md").read_text(encoding="utf-8") == "amount is in euros.\n"


def test_copy_mode_is_self_contained(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch", link_context=False)
    orders = root / "context" / "csv" / "orders.csv"
    assert not orders.is_symlink() and orders.read_bytes() == (task_input / "context" / "csv" / "orders.csv").read_bytes()


def test_the_input_is_never_written(task_input: Path, tmp_path: Path) -> None:
    before = snapshot(task_input)
    root = prepare_task(task_input, tmp_path / "scratch")
    prepare_task(task_input, tmp_path / "scratch")
    restore_scaffold(ScratchLayout.of(root))
    assert snapshot(task_input) == before


def test_scaffold_shape(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    lines = (root / "workdir" / "solver.py").read_text(encoding="utf-8").splitlines()
    assert lines.count(RESULT_LINE) == 1
    start, result, end = lines.index(QUERY_AREA_START), lines.index(RESULT_LINE), lines.index(QUERY_AREA_END)
    assert start < result < end < lines.index(SAVE_BLOCK_START)
    area = "\n".join(lines[start:result])
    assert f"# Question: {TINY_QUESTION}" in area
    assert "# Tables: orders, cities" in area or "# Tables: cities, orders" in area
    assert "from datasolver.data import Catalog" in lines
    assert f"NO_RESULT_MARKER = {NO_RESULT_MARKER!r}" in lines


def test_question_with_line_breaks_stays_inside_comments(tmp_path: Path) -> None:
    task = make_tiny_task(tmp_path / "input")
    nasty = "first line\nimport os; os.remove('x')\r\n\u2028\"\"\" end\x00"
    (task / "task.json").write_text(json.dumps({"task_id": "task_tiny", "question": nasty}), encoding="utf-8")
    root = prepare_task(task, tmp_path / "scratch")
    text = (root / "workdir" / "solver.py").read_text(encoding="utf-8")
    compile(text, "solver.py", "exec")
    assert "# Question: first line\n#           import os; os.remove('x')\n" in text


@pytest.mark.slow
def test_solver_runs_from_anywhere(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    solver = root / "workdir" / "solver.py"
    solver.write_text(
        solver.read_text(encoding="utf-8").replace(RESULT_LINE, 'result = run_sql("SELECT count(*) AS n FROM orders")'),
        encoding="utf-8",
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, argv in ((root, ["workdir/solver.py"]), (elsewhere, [str(solver)])):
        (root / "workdir" / "prediction.csv").unlink(missing_ok=True)
        done = subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert (root / "workdir" / "prediction.csv").read_text(encoding="utf-8") == "n\n4\n"
    assert not list(elsewhere.iterdir())


def test_result_none_writes_no_file_and_prints_the_marker(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    done = subprocess.run([sys.executable, str(root / "workdir" / "solver.py")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == NO_RESULT_MARKER
    assert not (root / "workdir" / "prediction.csv").exists()


@pytest.mark.parametrize(
    ("code", "csv_text"),
    [
        ("result = run_sql(\"SELECT 'a,b' AS x, 'say \\\"hi\\\"' AS y\")", 'x,y\n"a,b","say ""hi"""\n'),
        ("result = pd.DataFrame({'v': ['', 'x']})", 'v\n""\nx\n'),  # empty one-column cell stays a row
        ("result = run_sql('SELECT city, amount FROM orders').groupby('city')['amount'].sum().sort_index()",
         "city,amount\nLyon,3.0\nNice,0.0\nParis,17.5\n"),  # group keys (named index) are kept
        ("result = run_sql('SELECT order_id FROM orders WHERE order_id > 2')", "order_id\n3\n4\n"),  # no index column
        ("result = 42", "result\n42\n"),
    ],
)
def test_save_block_csv_format(task_input: Path, tmp_path: Path, code: str, csv_text: str) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    solver = root / "workdir" / "solver.py"
    solver.write_text(solver.read_text(encoding="utf-8").replace(RESULT_LINE, code), encoding="utf-8")
    done = subprocess.run([sys.executable, str(solver)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (root / "workdir" / "prediction.csv").read_bytes() == csv_text.encode("utf-8")


def test_prepare_again_refreshes_and_keeps_nothing_stale(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    pristine = (root / "workdir" / "solver.py").read_text(encoding="utf-8")
    (root / "workdir" / "solver.py").write_text("edited\n", encoding="utf-8")
    (root / "workdir" / "prediction.csv").write_text("x\n1\n", encoding="utf-8")
    (root / "workdir" / "scribble.txt").write_text("x", encoding="utf-8")
    (root / "tmp" / "junk").write_text("x", encoding="utf-8")
    (root / "context" / "csv" / "gone.csv").write_text("a\n1\n", encoding="utf-8")
    (root / "derived").mkdir()
    (root / "derived" / "kept.csv").write_text("a\n1\n", encoding="utf-8")
    assert prepare_task(task_input, tmp_path / "scratch") == root
    assert (root / "workdir" / "solver.py").read_text(encoding="utf-8") == pristine
    assert sorted(p.name for p in (root / "workdir").iterdir()) == [".solver.pristine.py", "solver.py"]
    assert not list((root / "tmp").iterdir())
    assert not (root / "context" / "csv" / "gone.csv").exists()
    assert (root / "derived" / "kept.csv").exists()  # derived/ belongs to the documents room


def test_write_scaffold_lists_derived_tables(task_input: Path, tmp_path: Path) -> None:
    root = prepare_task(task_input, tmp_path / "scratch")
    write_scaffold(ScratchLayout.of(root), table_names=["orders", "doc_people"])
    assert "# Tables: orders, doc_people" in (root / "workdir" / "solver.py").read_text(encoding="utf-8")
    assert "doc_people" in (root / "workdir" / ".solver.pristine.py").read_text(encoding="utf-8")


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskError):
        prepare_task(tmp_path, tmp_path / "scratch")
    task = make_tiny_task(tmp_path / "input")
    with pytest.raises(ScratchError, match="inside the input task"):
        prepare_task(task, task / "scratch")
    (task / "task.json").write_text(json.dumps({"task_id": "../escape", "question": "q"}), encoding="utf-8")
    with pytest.raises(TaskError, match="cannot name a folder"):
        prepare_task(task, tmp_path / "scratch")
    with pytest.raises(ScratchError, match="datasolver prepare"):  # where a folder comes in, it is checked
        ScratchLayout.of(tmp_path / "nothing").require()
    assert not (tmp_path / "escape").exists()
