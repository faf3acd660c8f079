"""read_solver and edit_solver, driven through JSON arguments as the agent sends them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.solver import SolverToolbox, restore_scaffold
from datasolver.solver.prepare import prepare_task
from datasolver.solver.scaffold import RESULT_LINE
from datasolver.data import ScratchLayout
from datasolver.solver.scaffold import QUERY_AREA_END, QUERY_AREA_START
from datasolver.solver.hashline import line_hash, split_lines
from tests.helpers.solver import call_json, make_tiny_task, result_line_address

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture
def toolbox(tmp_path: Path):
    scratch = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(scratch)) as box:
        yield box


def solver_lines(box: SolverToolbox) -> list[str]:
    return split_lines(box.layout.solver_py.read_text(encoding="utf-8"))


def edit(box: SolverToolbox, **args) -> object:
    return call_json(box, "edit_solver", json.dumps(args))


def test_line_hash_is_two_uppercase_letters_and_depends_on_content() -> None:
    hashes = {line_hash(f"x = {i}") for i in range(200)}
    assert all(len(h) == 2 and h.isalpha() and h.isupper() and h.isascii() for h in hashes)
    assert len(hashes) > 100
    assert line_hash("result = None") == line_hash("result = None")


def test_read_solver_renders_number_hash_content(toolbox) -> None:
    result = call_json(toolbox, "read_solver", "{}")
    assert result.ok and result.kind == "ok"
    rows = result.text.splitlines()
    lines = solver_lines(toolbox)
    assert len(rows) == len(lines)
    for n, (row, line) in enumerate(zip(rows, lines), start=1):
        assert row == f"{n}:{line_hash(line)}|{line}"
    assert sum(1 for line in lines if line == RESULT_LINE) == 1


def test_read_solver_offset_and_limit(toolbox) -> None:
    lines = solver_lines(toolbox)
    result = call_json(toolbox, "read_solver", '{"offset": 3, "limit": 2}')
    rows = result.text.splitlines()
    assert rows[:2] == [f"3:{line_hash(lines[2])}|{lines[2]}", f"4:{line_hash(lines[3])}|{lines[3]}"]
    assert "read_solver(offset=5)" in rows[2]
    past = call_json(toolbox, "read_solver", '{"offset": 9999}')
    assert past.kind == "retry" and f"{len(lines)} lines" in past.text


def test_hash_mismatch_is_rejected_with_the_current_hash(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    wrong = "AA" if digest != "AA" else "AB"
    before = toolbox.layout.solver_py.read_bytes()
    result = edit(toolbox, start_line=number, start_hash=wrong, new_content="result = 1")
    assert result.kind == "retry" and not result.ok
    assert f"current hash is '{digest}'" in result.text and "unchanged" in result.text
    assert toolbox.layout.solver_py.read_bytes() == before
    # The message carries what is needed to resend without re-reading.
    assert edit(toolbox, start_line=number, start_hash=digest, new_content="result = 1").ok


def test_end_hash_mismatch_and_missing_end_hash_are_rejected(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    lines = solver_lines(toolbox)
    before = toolbox.layout.solver_py.read_bytes()
    missing = edit(toolbox, start_line=number, start_hash=digest, end_line=number + 1, new_content="x = 1")
    assert missing.kind == "retry" and "end_hash is required" in missing.text
    wrong = edit(toolbox, start_line=number, start_hash=digest, end_line=number + 1, end_hash="ZZ"
                 if line_hash(lines[number]) != "ZZ" else "ZY", new_content="x = 1")
    assert wrong.kind == "retry" and f"current hash is '{line_hash(lines[number])}'" in wrong.text
    assert toolbox.layout.solver_py.read_bytes() == before


def test_syntax_error_rolls_back_and_shows_a_window(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    before = toolbox.layout.solver_py.read_bytes()
    result = edit(toolbox, start_line=number, start_hash=digest, new_content="result = run_sql(\"SELECT 1\"")
    assert result.kind == "retry"
    assert "would not parse" in result.text and "SyntaxError" in result.text
    assert f">> {number}| result = run_sql(\"SELECT 1\"" in result.text
    window = [row for row in result.text.splitlines() if row[:2] in (">>", "  ")]
    assert 4 <= len(window) <= 7  # the error line and up to 3 lines either side
    assert toolbox.layout.solver_py.read_bytes() == before


def test_multi_line_replace_returns_a_fresh_window(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    lines = solver_lines(toolbox)
    end = number + 1  # the END OF QUERY AREA marker
    new = "frame = run_sql('SELECT 1 AS x')\nresult = frame\n# end of my query"
    result = edit(toolbox, start_line=number, start_hash=digest, end_line=end, end_hash=line_hash(lines[end - 1]),
                  new_content=new)
    assert result.ok, result.text
    after = solver_lines(toolbox)
    assert after == lines[: number - 1] + new.split("\n") + lines[end:]
    assert result.text.startswith(f"Replaced lines {number}-{end} with 3 lines")
    assert f"{number + 1}:{line_hash('result = frame')}|result = frame" in result.text.splitlines()


def test_insert_after(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    lines = solver_lines(toolbox)
    result = edit(toolbox, start_line=number, start_hash=digest, insert_after=True,
                  new_content="if result is None:\n    result = run_sql('SELECT 2 AS y')\n")
    assert result.ok, result.text
    after = solver_lines(toolbox)
    assert after[: number] == lines[: number]
    assert after[number : number + 2] == ["if result is None:", "    result = run_sql('SELECT 2 AS y')"]
    assert after[number + 2 :] == lines[number:]
    assert result.text.startswith(f"Inserted 2 lines after line {number}")


def test_delete_with_empty_content(toolbox) -> None:
    lines = solver_lines(toolbox)
    number = next(i for i, line in enumerate(lines, start=1) if line.startswith("# Use run_sql("))
    result = edit(toolbox, start_line=number, start_hash=line_hash(lines[number - 1]), new_content="")
    assert result.ok and result.text.startswith(f"Deleted line {number}")
    assert solver_lines(toolbox) == lines[: number - 1] + lines[number:]


def test_indentation_error_is_a_syntax_rejection(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    result = edit(toolbox, start_line=number, start_hash=digest, new_content="    result = 1")
    assert result.kind == "retry" and "IndentationError" in result.text


def test_bad_arguments_are_retry_not_exceptions(toolbox) -> None:
    assert toolbox.call("edit_solver", {"start_line": 1}).kind == "retry"
    assert toolbox.call("edit_solver", {"start_line": 0, "start_hash": "AA", "new_content": ""}).kind == "retry"
    beyond = edit(toolbox, start_line=10_000, start_hash="AA", new_content="x")
    assert beyond.kind == "retry" and "does not exist" in beyond.text
    assert toolbox.call("no_such_tool", {}).kind == "retry"


def test_pasted_address_and_lower_case_hash_are_accepted(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    assert edit(toolbox, start_line=number, start_hash=f"{number}:{digest.lower()}|result = None",
                new_content="result = 2").ok


def test_restore_scaffold_undoes_edits_and_removes_prediction(toolbox) -> None:
    pristine = toolbox.layout.solver_py.read_text(encoding="utf-8")
    number, digest = result_line_address(toolbox)
    edit(toolbox, start_line=number, start_hash=digest, new_content="result = 3")
    toolbox.layout.prediction.write_text("x\n1\n", encoding="utf-8")
    restore_scaffold(toolbox.layout)
    assert toolbox.layout.solver_py.read_text(encoding="utf-8") == pristine
    assert not toolbox.layout.prediction.exists()


# -- the easier edit: one SQL string for the whole query area ------------------------------------

def test_sql_replaces_the_query_area_code_and_keeps_its_comments(toolbox) -> None:
    before = solver_lines(toolbox)
    result = edit(toolbox, sql="SELECT city, count(*) AS n FROM orders GROUP BY city")
    assert result.ok, result.text
    after = solver_lines(toolbox)
    start, end = after.index(QUERY_AREA_START), after.index(QUERY_AREA_END)
    area = after[start + 1:end]
    assert [line for line in area if line.startswith("# Question: ")] and RESULT_LINE not in after
    code = [line for line in area if not line.startswith("#")]
    assert code == ['result = run_sql("""', "SELECT city, count(*) AS n FROM orders GROUP BY city", '""")']
    assert after[:start] == before[:before.index(QUERY_AREA_START)]  # loading and saving untouched
    assert after[end:] == before[before.index(QUERY_AREA_END):]
    assert "Query area replaced" in result.text and "run_solver" in result.text
    run = call_json(toolbox, "run_solver", "{}")
    assert run.text.splitlines()[0] == "OK", run.text


def test_sql_again_replaces_the_previous_query_and_any_code_the_model_wrote(toolbox) -> None:
    number, digest = result_line_address(toolbox)
    assert edit(toolbox, start_line=number, start_hash=digest, new_content="x = 1\nresult = None").ok
    assert edit(toolbox, sql="SELECT 1 AS a").ok
    assert edit(toolbox, sql="  SELECT 2 AS b;  ").ok
    area = solver_lines(toolbox)
    code = [line for line in area[area.index(QUERY_AREA_START) + 1:area.index(QUERY_AREA_END)]
            if not line.startswith("#")]
    assert code == ['result = run_sql("""', "SELECT 2 AS b;", '""")']


def test_nothing_at_all_or_an_empty_sql_is_a_retry(toolbox) -> None:
    neither = edit(toolbox)
    assert neither.kind == "retry" and "sql" in neither.text and "start_line" in neither.text
    empty = edit(toolbox, sql="   ")
    assert empty.kind == "retry"
    assert RESULT_LINE in solver_lines(toolbox)  # unchanged


def test_sql_when_the_query_area_markers_are_gone_is_a_retry(toolbox) -> None:
    lines = solver_lines(toolbox)
    start = lines.index(QUERY_AREA_START) + 1
    assert edit(toolbox, start_line=start, start_hash=line_hash(lines[start - 1]), new_content="# gone").ok
    gone = edit(toolbox, sql="SELECT 1")
    assert gone.kind == "retry" and "start_line" in gone.text


def test_sql_beside_line_fields_wins_and_a_run_sql_line_gives_its_query(toolbox) -> None:
    # The real 1.5B model sent both, with its query wrapped as solver.py code (task_retqa_v1800).
    number, digest = result_line_address(toolbox)
    both = edit(toolbox, sql='result = run_sql("SELECT 1 AS a")', start_line=number, start_hash=digest,
                new_content="result = 1")
    assert both.ok and "start_line, start_hash, new_content ignored" in both.text
    area = solver_lines(toolbox)
    code = [line for line in area[area.index(QUERY_AREA_START) + 1:area.index(QUERY_AREA_END)]
            if not line.startswith("#")]
    assert code == ['result = run_sql("""', "SELECT 1 AS a", '""")']


def test_the_summary_view_is_read_solvers_text_or_only_the_query_area(toolbox) -> None:
    # What the compaction note shows of solver.py; a small window gets the query area only, with the
    # same line numbers and hashes, so an edit addressed from it still lands.
    assert toolbox.solver_view() == call_json(toolbox, "read_solver", json.dumps({"limit": 2000})).text
    lines = solver_lines(toolbox)
    first, last = lines.index(QUERY_AREA_START) + 1, lines.index(QUERY_AREA_END) + 1
    area = toolbox.solver_view(area_only=True).splitlines()
    asked = json.dumps({"offset": first, "limit": last - first + 1})
    assert area == call_json(toolbox, "read_solver", asked).text.splitlines()
    numbered = [line for line in area if line[:1].isdigit()]  # then read_solver's "… more lines" note
    assert numbered[0].startswith(f"{first}:") and numbered[-1].startswith(f"{last}:")
    assert len(numbered) == last - first + 1 < len(lines)
    toolbox.layout.solver_py.write_text("x = 1\n", encoding="utf-8")  # markers gone: the whole file
    assert toolbox.solver_view(area_only=True) == toolbox.solver_view()
