"""The parent never trusts what the sandbox wrote (issue 33, item 4): a wide prediction.csv, run_sql's
query log (a line nested 100,000 deep, a 3 MB query, a query whose re-run joins 10^12 rows) and a
handed-over scratch whose cache/ is a link. Each attack is a solver.py (or a scratch folder) run
through the real command, `datasolver tool … run_solver`, or the parent's own self-check. What is
under test is the parent, so the runs take whichever sandbox path is in use (tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from datasolver.data import ScratchLayout
from datasolver.solver import SolverToolbox
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import call_json, make_tiny_task, set_query

PEAK_CHILD = textwrap.dedent("""
    import resource, subprocess, sys
    try:  # on a timeout the command is killed here (and its sandboxed runs with it: PR_SET_PDEATHSIG)
        done = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=float(sys.argv[1]))
    except subprocess.TimeoutExpired:
        print("TIMEOUT")
        sys.exit(124)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    print("PEAK-KIB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    sys.exit(done.returncode)
""")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def forge(root: Path, log_line: str, result: str = "pd.DataFrame({'city': pd.Series([], dtype=str)})") -> None:
    """solver.py appends `log_line` to run_sql's log itself and answers `result`."""
    with SolverToolbox(ScratchLayout.of(root)) as box:
        edit = set_query(box, f"with open(QUERY_LOG, 'a', encoding='utf-8') as _log:\n"
                              f"    _log.write({log_line} + '\\n')\n"
                              f"result = {result}")
        assert edit.ok, edit.text


def tool_run_solver(root: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    """`datasolver tool ROOT run_solver '{}'` in a child that reports the tree's peak RSS (KiB)."""
    done = subprocess.run([sys.executable, "-c", PEAK_CHILD, str(timeout), sys.executable, "-m", "datasolver", "tool",
                           str(root), "run_solver", "{}"], capture_output=True, text=True, timeout=timeout + 60)
    if done.returncode == 124 and done.stdout.startswith("TIMEOUT"):
        pytest.fail(f"`datasolver tool run_solver` had not answered after {timeout:g} s")
    return done


def peak_mib(done: subprocess.CompletedProcess) -> int:
    return int(done.stdout.rsplit("PEAK-KIB", 1)[1]) >> 10


def test_a_line_nested_100000_deep_in_the_query_log_is_skipped_not_a_traceback(root: Path) -> None:
    forge(root, "'{\"sql\": ' + '[' * 100000 + ']' * 100000 + '}'")
    done = tool_run_solver(root)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr and "RecursionError" not in done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "OK", done.stdout[:2000]


def test_a_3_mb_final_query_is_not_parsed_in_the_parent(root: Path) -> None:
    # Before: sqlglot parsed it in the parent, 1.2 GB and 38-54 s.
    forge(root, "json.dumps({'sql': 'SELECT ' + ' + '.join(['1'] * 1_000_000) + ' AS city'})",
          result="pd.DataFrame({'city': [7]})")
    done = tool_run_solver(root)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == "OK", done.stdout[:2000]
    assert peak_mib(done) < 700, f"peak {peak_mib(done)} MiB"


def test_an_empty_result_check_never_re_runs_a_join_of_10_12_rows_for_long(root: Path) -> None:
    # The logged query joins orders 20 times (4^20 ≈ 10^12 rows); empty_result counts it without
    # its one filter. Before: on the parent's catalog with no short timeout (`tool` never answered).
    joined = ", ".join(f"orders o{i}" for i in range(1, 21))
    sql = f"SELECT o1.city FROM {joined} WHERE o1.city = 'Atlantis'"
    forge(root, f"json.dumps({{'sql': {sql!r}}})")
    done = tool_run_solver(root, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[0] == "OK", done.stdout[:2000]
    assert "CHECK empty_result: no rows." in done.stdout, done.stdout[:3000]


def test_the_checks_queries_stop_at_their_timeout_and_budget(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datasolver.data import Catalog
    from datasolver.data.layout import ScratchLayout
    from datasolver.solver.answer_checks import model
    from datasolver.solver.answer_checks.queries import empty_result
    from datasolver.solver.answer_checks.run import answer_context
    from datasolver.solver.prediction_check import check_prediction

    joined = ", ".join(f"orders o{i}" for i in range(1, 21))
    forge(root, f"json.dumps({{'sql': \"SELECT o1.city FROM {joined} WHERE o1.city = 'Atlantis'\"}})")
    with SolverToolbox(ScratchLayout.of(root), answer_checks=False) as box:
        assert call_json(box, "run_solver", "{}").ok
    monkeypatch.setattr(model, "QUERY_TIMEOUT_S", 0.5)
    layout = ScratchLayout.of(root)
    with Catalog.open(root, cache_dir=layout.own_cache()) as catalog:
        ctx = answer_context(layout, "q", check_prediction(layout.prediction), catalog)
        (finding,) = empty_result(ctx)
        assert finding.name == "empty_result" and "timed out after 0.5 s" in " ".join(ctx.notes), ctx.notes
        ctx.deadline = 0.0  # the budget spent: no query runs at all
        empty_result(ctx)
    assert "not run: the answer checks' 8 s were spent" in " ".join(ctx.notes), ctx.notes


def test_the_query_log_is_read_from_its_tail_line_by_line_as_untrusted_json() -> None:
    from datasolver.solver.answer_checks import read_query_log

    notes: list[str] = []
    text = "\n".join(["[" * 60_000 + "]" * 60_000, '"not an object"', "x" * 200_000,
                      json.dumps({"sql": "SELECT 2"})])
    assert read_query_log(text, notes) == ["SELECT 2"]
    assert "3 line(s) skipped" in notes[0] and "nested deeper than 100 levels" in notes[0], notes


WIDE_CHILD = textwrap.dedent("""
    import resource, sys
    from pathlib import Path
    from datasolver.solver.prediction_check import check_prediction
    path = Path(sys.argv[1])
    with open(path, "w") as out:
        out.write(",".join(f"c{i}" for i in range(4000)) + "\\n")
        row = ",".join(str(i % 10) for i in range(4000)) + "\\n"
        while out.tell() < 32 << 20:
            out.write(row)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for answer_checked in (True, False):
        check = check_prediction(path, answer_checked=answer_checked)
        assert check.shape[1] == 4000 and len(check.head) == 50 and len(check.sample) == 50, check.shape
    print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def test_a_32_mb_prediction_of_4000_columns_costs_the_parent_little(tmp_path: Path) -> None:
    # Before: 1.5 GB (×45) for the self-check. The child has a 3 GiB address-space cap.
    limit = 3 << 30
    code = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n" + WIDE_CHILD
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "prediction.csv")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = map(int, done.stdout.split())
    assert (after - before) >> 10 < 200, f"the self-check took {(after - before) >> 10} MiB"


def test_a_wide_answer_is_shown_in_part(root: Path) -> None:
    with SolverToolbox(ScratchLayout.of(root)) as box:
        set_query(box, "result = pd.DataFrame([[i for i in range(300)]] * 3, columns=[f'c{i}' for i in range(300)])")
        text = call_json(box, "run_solver", '{"show_rows": 2}').text
    assert text.splitlines()[0] == "OK", text
    assert "prediction.csv: 3 rows × 300 columns" in text
    assert "columns: c0, c1," in text and "c49, … (+250 more)" in text
    assert "first 2 rows (the first 50 columns):" in text and "c50" not in text.split("first 2 rows")[1]


def test_a_linked_cache_folder_in_a_handed_over_scratch_is_refused(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "cache").rmdir()
    (root / "cache").symlink_to(elsewhere, target_is_directory=True)
    with SolverToolbox(ScratchLayout.of(root)) as box:
        result = call_json(box, "explore_data", '{"query": "SELECT count(*) FROM orders"}')
        assert list(elsewhere.iterdir()) == [], "the parent's catalog was made in the link's target"
    assert not result.ok and "cache is a symlink or not a folder; refusing to keep the catalog there" in result.text
    done = subprocess.run([sys.executable, "-m", "datasolver", "tool", str(root), "run_solver", "{}"],
                          capture_output=True, text=True, timeout=120)
    assert "refusing to keep the catalog there" in done.stdout and list(elsewhere.iterdir()) == []
