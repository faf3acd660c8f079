"""run_solver through JSON arguments: FAILED / NO OUTPUT / OK, self-check, timeout, sandbox escapes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from datasolver.sandbox.run import landlock_abi
from datasolver.solver import SolverToolbox, prepare_scratch
from datasolver.solver.prepare import prepare_task
from datasolver.solver.scaffold import NO_RESULT_MARKER
from datasolver.data import ScratchLayout
from tests.helpers.solver import call_json, make_tiny_task, set_query

# Every test runs cold and warm (forked from the fork server's zygote): tests/conftest.py.

pytestmark = [pytest.mark.usefixtures("sandbox_path"), pytest.mark.fast]  # in-process: no server, CLI subprocess or wheel build

needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="Landlock is not available on this kernel")


@pytest.fixture
def task_input(tmp_path: Path) -> Path:
    return make_tiny_task(tmp_path / "input")


@pytest.fixture
def toolbox(tmp_path: Path, task_input: Path):
    with SolverToolbox(prepare_scratch(task_input, tmp_path / "scratch")) as box:
        yield box


def run(box: SolverToolbox, **args):
    return call_json(box, "run_solver", json.dumps(args))


def test_pristine_scaffold_gives_no_output_and_writes_nothing(toolbox) -> None:
    result = run(toolbox)
    assert result.text.splitlines()[0] == "NO OUTPUT"
    assert result.kind == "failed"
    assert not toolbox.layout.prediction.exists()
    assert NO_RESULT_MARKER not in result.text  # the fixed marker is interpreted, not echoed


def test_ok_with_self_check(toolbox) -> None:
    assert set_query(toolbox, 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city")').ok
    result = run(toolbox, show_rows=2)
    lines = result.text.splitlines()
    assert lines[0] == "OK" and result.ok
    assert "prediction.csv: 3 rows × 2 columns" in lines
    assert "columns: city, n" in lines
    assert "non-null per column: city=3, n=3" in lines
    assert "first 2 rows:\ncity,n\nParis,2\nLyon,1" in result.text
    assert "warnings" not in result.text
    assert toolbox.layout.prediction.read_text(encoding="utf-8") == "city,n\nParis,2\nLyon,1\nNice,1\n"


def test_ok_without_self_check_is_short(toolbox) -> None:
    set_query(toolbox, 'result = run_sql("SELECT order_id FROM orders")')
    result = run(toolbox, self_check=False)
    assert result.text.splitlines() == ["OK", "prediction.csv written: 4 rows × 1 columns"]


def test_self_check_warnings(toolbox) -> None:
    code = (
        'result = run_sql("SELECT city, NULL AS nothing FROM orders UNION ALL SELECT \'Paris\', NULL")'
        ".reset_index()"
    )
    set_query(toolbox, code)
    result = run(toolbox)
    assert result.ok
    assert "non-null per column: index=5, city=5, nothing=0" in result.text
    assert result.value.names == ["helper_column", "all_null_column"]  # the index makes rows unique
    assert "\nCHECK all_null_column: column 'nothing' is NULL in all 5 rows" in result.text
    assert "\nCHECK helper_column: column 'index' is a row number / rank" in result.text

    set_query_again = 'result = run_sql("SELECT city FROM orders UNION ALL SELECT \'Paris\'")'
    from datasolver.solver import restore_scaffold

    restore_scaffold(toolbox.layout)
    set_query(toolbox, set_query_again)
    again = run(toolbox)
    assert again.value.names == ["duplicate_rows"]
    assert "CHECK duplicate_rows: 2 of 5 rows repeat another row (3 distinct" in again.text  # Paris three times


@pytest.mark.parametrize(("sql", "check", "warning"), [
    ("SELECT city FROM orders UNION ALL SELECT 'Paris'", "duplicate_rows", "duplicate row(s)"),
    ("SELECT order_id, NULL AS nothing FROM orders", "all_null_column", "entirely null"),
    ("SELECT city FROM orders WHERE city = 'Pari'", "empty_result", "no rows"),
], ids=["duplicates", "all_null", "no_rows"])
def test_each_fact_is_said_once_by_its_check_line(tmp_path: Path, task_input: Path, sql, check, warning) -> None:
    # The streaming self-check and the answer checks see the same facts; the CHECK line says them.
    with SolverToolbox(prepare_scratch(task_input, tmp_path / "scratch")) as box:
        set_query(box, f'result = run_sql("{sql}")')
        checked = run(box)
    assert checked.value.names == [check]
    assert checked.text.count(f"CHECK {check}:") == 1
    assert not [line for line in checked.text.splitlines() if line.startswith("- ") and warning in line], checked.text
    # With the answer checks off, the self-check still warns (the only one saying it).
    with SolverToolbox(prepare_scratch(task_input, tmp_path / "bare"), answer_checks=False) as box:
        set_query(box, f'result = run_sql("{sql}")')
        bare = run(box)
    assert [line for line in bare.text.splitlines() if line.startswith("- ") and warning in line], bare.text
    assert "CHECK " not in bare.text


def test_a_run_queries_the_tables_the_agents_catalog_loaded(toolbox, task_input: Path) -> None:
    set_query(toolbox, 'result = run_sql("SELECT count(*) AS n FROM orders")')
    orders = task_input / "context" / "csv" / "orders.csv"
    catalog = toolbox.context.open_catalog()
    catalog.load(["orders"])  # its 4 rows; cities is not loaded yet
    orders.write_text("order_id,city,amount\n9,Oslo,1\n", encoding="utf-8")
    # Not every table loaded: the run reads the files itself (and sees the file as it is now).
    assert run(toolbox).ok and toolbox.layout.prediction.read_text(encoding="utf-8") == "n\n1\n"
    catalog.load()  # every table loaded, as the agent's brief does: the run queries them as loaded
    assert run(toolbox).ok and toolbox.layout.prediction.read_text(encoding="utf-8") == "n\n4\n"


def test_failed_sql_puts_the_error_first(toolbox) -> None:
    set_query(toolbox, 'result = run_sql("SELECT no_such_column FROM orders")')
    result = run(toolbox)
    lines = result.text.splitlines()
    assert lines[0] == "FAILED" and result.kind == "failed"
    assert lines[1].startswith("QueryError: Binder Error") and "no_such_column" in lines[1]
    assert any(line.startswith("at solver.py line ") and "run_sql(" in line for line in lines)
    assert "Traceback (most recent call last)" not in result.text
    assert not toolbox.layout.prediction.exists()


def test_failed_python_error(toolbox) -> None:
    set_query(toolbox, "result = 1 / 0")
    result = run(toolbox)
    assert result.text.splitlines()[:2] == ["FAILED", "ZeroDivisionError: division by zero"]


def test_a_failed_run_removes_a_stale_prediction(toolbox) -> None:
    set_query(toolbox, 'result = run_sql("SELECT 1 AS x")')
    assert run(toolbox).ok and toolbox.layout.prediction.exists()
    text = toolbox.layout.solver_py.read_text(encoding="utf-8").replace(
        'result = run_sql("SELECT 1 AS x")', "result = None"
    )
    toolbox.layout.solver_py.write_text(text, encoding="utf-8")
    assert run(toolbox).text.startswith("NO OUTPUT")
    assert not toolbox.layout.prediction.exists()


def test_a_run_past_its_timeout_is_failed_and_says_so(toolbox) -> None:
    # Whether solver.py is still importing or already waiting when the timeout strikes, the
    # report is the same (the process-group kill itself is tested on the sandbox alone). It waits
    # on an event nothing sets: only the kill ends it.
    set_query(toolbox, "import threading\nthreading.Event().wait()\nresult = None")
    result = run(toolbox, timeout=0.3)
    assert result.text.splitlines()[0] == "FAILED"
    assert "timed out after 0.3 s" in result.text


@needs_landlock
def test_writes_outside_the_workdir_are_denied(toolbox, task_input: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    into_input = task_input / "context" / "csv" / "orders.csv"
    original = into_input.read_bytes()
    code = (
        "denied = []\n"
        f"for target in [{str(outside)!r}, {str(into_input)!r}, {str(toolbox.layout.root / 'task.json')!r}]:\n"
        "    try:\n"
        "        open(target, 'a').write('x')\n"
        "    except PermissionError:\n"
        "        denied.append(target)\n"
        "(TASK_DIR / 'workdir' / 'mine.txt').write_text('allowed')\n"
        "result = pd.DataFrame({'denied': denied})"
    )
    set_query(toolbox, code)
    result = run(toolbox)
    assert result.ok, result.text
    assert "denied=3" in result.text
    assert not outside.exists()
    assert into_input.read_bytes() == original
    assert (toolbox.layout.workdir / "mine.txt").read_text() == "allowed"


@needs_landlock
def test_an_unhandled_write_outside_fails_the_run(toolbox, tmp_path: Path) -> None:
    set_query(toolbox, f"open({str(tmp_path / 'escape.txt')!r}, 'w').write('x')\nresult = None")
    result = run(toolbox)
    assert result.text.splitlines()[:2] == ["FAILED", f"PermissionError: [Errno 13] Permission denied: '{tmp_path / 'escape.txt'}'"]
    assert not (tmp_path / "escape.txt").exists()


def test_secret_environment_variables_are_not_visible(toolbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_API_KEY", "sk-very-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("SOME_HARMLESS_SETTING", "1")
    code = (
        "names = ['MODEL_API_KEY', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'SOME_HARMLESS_SETTING']\n"
        "result = pd.DataFrame({'name': names, 'value': [os.environ.get(n, 'absent') for n in names]})"
    )
    set_query(toolbox, code)
    result = run(toolbox, show_rows=10)
    assert result.ok, result.text
    assert "sk-very-secret" not in result.text and "ghp-secret" not in result.text
    values = toolbox.layout.prediction.read_text(encoding="utf-8").splitlines()[1:]
    assert values == [f"{n},absent" for n in ("MODEL_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
                                              "SOME_HARMLESS_SETTING")]


def test_solver_runs_with_cwd_and_tmpdir_in_the_task_scratch(toolbox) -> None:
    set_query(toolbox, "import tempfile\nresult = pd.DataFrame({'cwd': [os.getcwd()], 'tmp': [tempfile.gettempdir()]})")
    assert run(toolbox).ok
    row = toolbox.layout.prediction.read_text(encoding="utf-8").splitlines()[1]
    assert row == f"{toolbox.layout.root},{toolbox.layout.tmp}"


def test_printed_output_is_shown(toolbox) -> None:
    set_query(toolbox, "print('looking at', 42)\nresult = run_sql('SELECT 1 AS x')")
    result = run(toolbox)
    assert "solver.py printed (last lines):\nlooking at 42" in result.text
    assert "saved 1 rows" not in result.text


def test_memory_limit_is_enforced(tmp_path: Path, task_input: Path) -> None:
    from datasolver.sandbox import SandboxLimits
    from datasolver.sandbox.policy import GiB

    scratch = prepare_task(task_input, tmp_path / "scratch2")
    with SolverToolbox(ScratchLayout.of(scratch), limits=SandboxLimits(memory_bytes=4 * GiB)) as box:
        set_query(box, "blob = bytearray(6 * 1024**3)\nresult = None")
        result = run(box)
    assert result.text.splitlines()[:2] == ["FAILED", "MemoryError"]


def test_environment_is_scrubbed_by_name() -> None:
    from datasolver.sandbox.policy import scrub_env

    env, refused = scrub_env(
        {"PATH": "/bin", "LANG": "C.UTF-8", "MODEL_API_KEY": "k", "HF_TOKEN": "t", "DB_PASSWORD": "p", "HOME": "/h"},
        extra={"OMP_NUM_THREADS": "2", "MY_API_KEY": "x"},
        home=Path("/scratch/tmp"),
    )
    assert env == {"PATH": "/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "2", "HOME": "/scratch/tmp",
                   "TMPDIR": "/scratch/tmp", "TMP": "/scratch/tmp", "TEMP": "/scratch/tmp"}
    assert refused == ["MY_API_KEY"]
    assert os.environ.get("MODEL_API_KEY") is None  # conftest keeps real keys out of tests
