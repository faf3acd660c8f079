"""run_solver's NO OUTPUT says exactly what to do next, with calls ready to copy: the line and
hash of `result = None` for edit_solver (or the one-SQL edit), and explore_data on the likeliest table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.data.terms import likeliest
from datasolver.solver import SolverToolbox, prepare_scratch
from datasolver.solver.prepare import prepare_task
from datasolver.solver.scaffold import RESULT_LINE
from tests.helpers.solver import call_json, make_paper_task, result_line_address, set_query

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def toolbox(tmp_path: Path):
    with SolverToolbox(prepare_scratch(make_paper_task(tmp_path / "input"), tmp_path / "scratch")) as box:
        yield box


def test_no_output_names_the_result_line_and_the_likeliest_table(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    result = call_json(toolbox, "run_solver", "{}")
    lines = result.text.splitlines()
    assert lines[0] == "NO OUTPUT"
    line_call = next(line for line in lines if '"start_line"' in line)
    args = json.loads(line_call.split("edit_solver", 1)[1])
    assert (args["start_line"], args["start_hash"]) == (number, digest)
    sql_call = next(line for line in lines if line.startswith('edit_solver {"sql"'))
    assert json.loads(sql_call.split("edit_solver", 1)[1])["sql"].startswith('SELECT')
    explore = next(line for line in lines if line.startswith("explore_data "))
    query = json.loads(explore.split("explore_data", 1)[1])["query"]
    assert query == 'SELECT * FROM paper LIMIT 5'
    assert call_json(toolbox, "explore_data", json.dumps({"query": query})).ok  # it runs as given


def test_the_copied_edit_by_line_is_accepted_and_the_placeholder_sql_does_not_pass_as_an_answer(toolbox) -> None:
    text = call_json(toolbox, "run_solver", "{}").text
    line_call = next(line for line in text.splitlines() if '"start_line"' in line)
    edited = call_json(toolbox, "edit_solver", line_call.split("edit_solver", 1)[1])
    assert edited.ok, edited.text
    # Copied verbatim, the placeholder query fails to run: it never becomes an answer by itself.
    assert call_json(toolbox, "run_solver", "{}").text.splitlines()[0] == "FAILED"


def test_without_the_result_line_it_says_to_read_solver_first(toolbox) -> None:
    assert set_query(toolbox, "x = 1\nresult = None if x else 2").ok
    text = call_json(toolbox, "run_solver", "{}").text
    assert text.startswith("NO OUTPUT") and "read_solver" in text and '"start_line"' not in text
    assert RESULT_LINE not in {line.split("|", 1)[-1] for line in text.splitlines()}


def test_likeliest_reads_both_ways_and_none_when_nothing_is_shared() -> None:
    texts = {"author": "author aid name", "paper": "paper pid title year", "writes": "writes aid pid"}
    assert likeliest("Titles of the papers published in 2020", texts) == "paper"
    assert likeliest("Which authors wrote the most?", texts) == "author"
    assert likeliest("zzz qqq", texts) is None
