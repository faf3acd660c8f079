"""The bundled examples: complete KDD-format tasks, gold that their SQL reproduces, and package
data that works from an installed (wheel-like) layout."""

from __future__ import annotations

import csv
import os
import sqlite3
import subprocess
import sys

import pytest

from datasolver import examples
from datasolver.data import Catalog, ScratchLayout, discover_tasks
from datasolver.eval import score_files
from datasolver.pipeline.documents import prepare_task_documents
from datasolver.solver.prepare import prepare_task
from datasolver.solver.answer_checks import AnswerContext, run_answer_checks

REPO = examples.EXAMPLES_DIR.parents[2]


def test_examples_are_kdd_tasks_with_every_source_kind():
    found = discover_tasks(examples.input_dir())
    assert found.errors == [] and len(found.tasks) == 4
    suffixes = {p.suffix for t in found.tasks for p in t.context_dir.rglob("*") if p.is_file()}
    assert {".csv", ".json", ".db", ".md", ".mp4"} <= suffixes
    for task in found.tasks:
        assert task.knowledge().strip(), task.task_id
        assert (examples.gold_dir() / task.task_id / "gold.csv").is_file()
        assert task.task_id in examples.demo_answers()


def test_the_sqlite_file_matches_its_source():
    db = examples.input_dir() / "task_demo_library" / "context" / "db" / "library.db"
    fresh = sqlite3.connect(":memory:")
    fresh.executescript((examples.EXAMPLES_DIR / "sources" / "library.sql").read_text(encoding="utf-8"))
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as shipped:
        for table in ("members", "books", "loans"):
            query = f"SELECT * FROM {table} ORDER BY 1"
            assert shipped.execute(query).fetchall() == fresh.execute(query).fetchall()


@pytest.mark.parametrize("task_id", ["task_demo_library", "task_demo_sales", "task_demo_weather", "task_demo_video"])
def test_scripted_sql_reproduces_gold(task_id, tmp_path):
    scratch = prepare_task(examples.input_dir() / task_id, tmp_path)
    prepare_task_documents(ScratchLayout.of(scratch))  # the weather stations live in a Markdown document
    answer = examples.demo_answers()[task_id]
    with Catalog.open(scratch, cache_dir=tmp_path / "cache") as catalog:
        frame = catalog.sql(answer.sql).df()
        frame.to_csv(tmp_path / "prediction.csv", index=False)
        # The right answer raises no answer check (no false positive).
        header, *rows = list(csv.reader(open(tmp_path / "prediction.csv", encoding="utf-8", newline="")))
        context = AnswerContext(answer.question or "", answer.query_code(), [answer.sql], header, rows, catalog)
        assert run_answer_checks(context).lines() == [] and context.notes == []
    assert score_files(tmp_path / "prediction.csv", examples.gold_dir() / task_id / "gold.csv").score == 1.0


def test_query_code_is_a_python_assignment():
    code = examples.demo_answers()["task_demo_sales"].query_code()
    compile(code, "solver.py", "exec")
    assert code.startswith('result = run_sql("""\nSELECT p.category')


@pytest.mark.slow
def test_the_demo_runs_from_a_wheel_like_install(tmp_path):
    # build_py lays the package out as a wheel does (package data included); run the demo from
    # there, not from the source tree.
    lib = tmp_path / "lib"
    build = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py", "--build-lib", str(lib)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr
    shipped = {p.relative_to(examples.EXAMPLES_DIR) for p in examples.EXAMPLES_DIR.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    built = {p.relative_to(lib / "datasolver" / "examples") for p in (lib / "datasolver" / "examples").rglob("*")
             if p.is_file()}
    assert shipped <= built
    env = {**os.environ, "PYTHONPATH": str(lib)}
    demo = subprocess.run(
        [sys.executable, "-m", "datasolver", "demo", "--output", str(tmp_path / "out")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "mean score 1.00" in demo.stdout
    assert f"datasolver run {lib / 'datasolver' / 'examples' / 'input'} OUTPUT_DIR" in demo.stdout
