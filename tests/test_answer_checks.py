"""Each answer check: a mistaken answer raises exactly its CHECK, the correct one of the same shape
raises none. Checks run on an AnswerContext over the tiny task's real catalog (no sandbox run);
tests/test_solver_run.py covers the lines inside run_solver's report."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data import Catalog, ScratchLayout
from datasolver.solver.answer_checks import (
    CHECK_NAMES,
    AnswerContext,
    CheckFinding,
    check_names_in,
    read_query_log,
    run_answer_checks,
)
from tests.helpers.solver import make_tiny_task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Catalog:
    task = make_tiny_task(tmp_path_factory.mktemp("tiny"))
    with Catalog.open(task) as cat:
        yield cat


def run_code(code: str) -> str:
    return f"# ==== QUERY AREA ====\n{code}\n"


def checks(catalog, question, sql, columns, rows, code=None):
    ctx = AnswerContext(question, code if code is not None else f'result = run_sql("""{sql}""")',
                        [sql] if sql else [], columns, rows, catalog)
    report = run_answer_checks(ctx)
    assert ctx.notes == [], ctx.notes  # no check crashed or failed to query
    return report


CASES = [
    # (check, question, mistaken (sql, columns, rows), correct (sql, columns, rows))
    ("helper_column", "Which cities have orders?",
     ("SELECT row_number() OVER (ORDER BY city) AS rn, city FROM (SELECT DISTINCT city FROM orders)",
      ["rn", "city"], [["1", "Lyon"], ["2", "Nice"], ["3", "Paris"]]),
     ("SELECT DISTINCT city FROM orders ORDER BY city", ["city"], [["Lyon"], ["Nice"], ["Paris"]])),
    ("helper_column", "Which city has the most orders?",
     ("SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC LIMIT 1", ["city", "n"], [["Paris", "2"]]),
     ("SELECT city FROM orders GROUP BY city ORDER BY count(*) DESC LIMIT 1", ["city"], [["Paris"]])),
    ("constant_column", "What are the amounts of the orders from Paris?",
     ("SELECT city, amount FROM orders WHERE city = 'Paris'", ["city", "amount"], [["Paris", "10.5"], ["Paris", "7.0"]]),
     ("SELECT amount FROM orders WHERE city = 'Paris'", ["amount"], [["10.5"], ["7.0"]])),
    ("duplicate_rows", "Which cities have orders?",
     ("SELECT city FROM orders WHERE amount IS NOT NULL", ["city"], [["Paris"], ["Lyon"], ["Paris"]]),
     ("SELECT DISTINCT city FROM orders WHERE amount IS NOT NULL", ["city"], [["Paris"], ["Lyon"]])),
    ("all_null_column", "What is each order's amount and country?",
     ("SELECT o.amount, c.country FROM orders o LEFT JOIN cities c ON c.city = o.order_id::VARCHAR",
      ["amount", "country"], [["10.5", ""], ["3.0", ""], ["7.0", ""]]),
     ("SELECT o.amount, c.country FROM orders o JOIN cities c ON c.city = o.city",
      ["amount", "country"], [["10.5", "FR"], ["3.0", "FR"], ["7.0", "FR"]])),
    ("text_numbers", "What is the amount of each order?",
     ("SELECT order_id, amount || ' EUR' AS amount FROM orders WHERE amount IS NOT NULL",
      ["order_id", "amount"], [["1", "10.5 EUR"], ["2", "3.0 EUR"], ["3", "7.0 EUR"]]),
     ("SELECT order_id, amount FROM orders WHERE amount IS NOT NULL",
      ["order_id", "amount"], [["1", "10.5"], ["2", "3.0"], ["3", "7.0"]])),
    # The three cases the checks once missed (issue 25): a helper row_number() defined in a CTE
    # and kept under another name, ...
    ("helper_column", "Which 2 orders have the largest amounts? Give their ids.",
     ("WITH r AS (SELECT order_id, row_number() OVER (ORDER BY amount DESC NULLS LAST) AS pos FROM orders) "
      "SELECT order_id, pos FROM r WHERE pos <= 2", ["order_id", "pos"], [["1", "1"], ["3", "2"]]),
     ("WITH r AS (SELECT order_id, row_number() OVER (ORDER BY amount DESC NULLS LAST) AS pos FROM orders) "
      "SELECT order_id FROM r WHERE pos <= 2", ["order_id"], [["1"], ["3"]])),
    # ... a literal column echoing a value of the question (not quoted, no equality filter), ...
    ("constant_column", "How many orders came from Paris?",
     ("SELECT 'Paris' AS city, count(*) AS n FROM orders WHERE city ILIKE 'paris'", ["city", "n"], [["Paris", "2"]]),
     ("SELECT count(*) AS n FROM orders WHERE city ILIKE 'paris'", ["n"], [["2"]])),
    ("constant_column", "How many orders were over 5 euros, and how many cities had them?",
     ("SELECT 5 AS threshold, count(*) AS n, count(DISTINCT city) AS cities FROM orders WHERE amount > 5",
      ["threshold", "n", "cities"], [["5", "2", "1"]]),
     ("SELECT count(*) AS n, count(DISTINCT city) AS cities FROM orders WHERE amount > 5",
      ["n", "cities"], [["2", "1"]])),
    # ... and a one-row answer repeated by UNION ALL although its WHERE lists values.
    ("duplicate_rows", "How many orders came from Paris or Lyon?",
     ("SELECT count(*) AS n FROM orders WHERE city IN ('Paris', 'Lyon') UNION ALL "
      "SELECT count(*) AS n FROM orders WHERE city IN ('Paris', 'Lyon')", ["n"], [["3"], ["3"]]),
     ("SELECT count(*) AS n FROM orders WHERE city IN ('Paris', 'Lyon')", ["n"], [["3"]])),
    ("early_rounding", "What is the average order amount?",
     ("SELECT ROUND(avg(amount), 0) AS a FROM orders", ["a"], [["7.0"]]),
     ("SELECT avg(amount) AS a FROM orders", ["a"], [["6.833333333333333"]])),
]


@pytest.mark.parametrize(("name", "question", "wrong", "right"), CASES, ids=[c[0] for c in CASES])
def test_a_mistake_raises_its_check_and_the_correct_answer_none(catalog, name, question, wrong, right) -> None:
    report = checks(catalog, question, *wrong)
    assert report.names == [name], report.lines()
    line = report.lines()[0]
    assert line.startswith(f"CHECK {name}: ")
    assert check_names_in("OK\n" + "\n".join(report.lines())) == [name]
    assert checks(catalog, question, *right).names == []


def test_empty_result_names_the_filter_that_removed_everything(catalog) -> None:
    sql = "SELECT amount FROM orders WHERE city = 'paris' AND amount > 1"
    report = checks(catalog, "What are the amounts of the orders from Paris?", sql, ["amount"], [])
    assert report.names == ["empty_result"]
    line = report.lines()[0]
    assert "without `city = 'paris'`: 3 rows (nearest existing values: 'Paris'" in line
    assert "without `amount > 1`: 0 rows" in line
    assert checks(catalog, "?", sql.replace("'paris'", "'Paris'"), ["amount"], [["10.5"], ["7.0"]]).names == []


def test_ties_cut_informs_singular_and_plural_readings(catalog) -> None:
    sql = "SELECT city FROM cities ORDER BY country LIMIT 1"
    report = checks(catalog, "Which city is in the first country?", sql, ["city"], [["Paris"]])
    assert report.names == ["ties_cut"]
    assert "2 rows share the sort key (FR) and 1 of them are kept" in report.lines()[0]
    assert report.blocking == []  # it informs only: no send-back
    no_tie = "SELECT city FROM orders WHERE amount IS NOT NULL ORDER BY amount DESC LIMIT 1"
    assert checks(catalog, "Which order city has the largest amount?", no_tie, ["city"], [["Paris"]]).names == []


def test_literal_answer_names_cells_found_in_no_table(catalog) -> None:
    code = 'result = pd.DataFrame({"city": ["Paris", "Lyonn"]})'
    report = checks(catalog, "Which cities have orders?", None, ["city"], [["Paris"], ["Lyonn"]], code=run_code(code))
    assert report.names == ["literal_answer"]
    assert "1 of 2 text cells occur in no table: 'Lyonn'" in report.lines()[0]
    from_sql = run_code('result = run_sql("SELECT DISTINCT city FROM orders")')
    assert checks(catalog, "Which cities have orders?", "SELECT DISTINCT city FROM orders", ["city"],
                  [["Paris"], ["Lyon"], ["Nice"]], code=from_sql).names == []


def test_rounding_the_question_asks_for_is_no_mistake(catalog) -> None:
    sql = "SELECT ROUND(avg(amount), 1) AS a FROM orders"
    assert checks(catalog, "What is the average amount, rounded to one decimal?", sql, ["a"], [["6.8"]]).names == []


def test_equal_values_for_each_named_entity_are_not_duplicates(catalog) -> None:
    sql = "SELECT country FROM cities WHERE city IN ('Paris', 'Lyon')"
    assert checks(catalog, "Which country are Paris and Lyon in?", sql, ["country"], [["FR"], ["FR"]]).names == []


def test_a_crashing_check_is_a_note_not_a_finding(catalog, monkeypatch) -> None:
    from datasolver.solver.answer_checks import run as run_module

    def boom(ctx):
        raise RuntimeError("bug")

    monkeypatch.setattr(run_module, "ANSWER_CHECKS", (("duplicate_rows", boom),))
    ctx = AnswerContext("?", "", [], ["a"], [["1"], ["1"]], catalog)
    assert run_answer_checks(ctx).findings == []
    assert ctx.notes == ["duplicate_rows crashed: RuntimeError: bug"]


def test_check_names_and_the_query_log() -> None:
    with pytest.raises(ValueError):
        CheckFinding("no_such_check", "x")
    assert len(CHECK_NAMES) == 14 and CHECK_NAMES[-1] == "asked_items"
    log = '{"sql": "SELECT 1", "rows": 1}\nnot json\n{"sql": "SELECT 2"}\n'
    assert read_query_log(log) == ["SELECT 1", "SELECT 2"]


def test_run_solver_reports_check_lines(tmp_path: Path) -> None:
    from datasolver.solver import SolverToolbox
    from datasolver.solver.prepare import prepare_task
    from tests.helpers.solver import set_query

    scratch = prepare_task(make_tiny_task(tmp_path / "in"), tmp_path / "scratch")
    with SolverToolbox(ScratchLayout.of(scratch)) as toolbox:
        set_query(toolbox, 'result = run_sql("SELECT city, amount FROM orders WHERE city = \'Paris\'")')
        result = toolbox.call("run_solver", {})
    assert result.value.names == ["constant_column"]
    assert [f.name for f in result.value.blocking] == ["constant_column"]
    assert "\nCHECK constant_column: column 'city' is 'Paris' in all 2 row(s)" in result.text
    assert read_query_log((scratch / "tmp" / "run_sql.jsonl").read_text(encoding="utf-8")) == [
        "SELECT city, amount FROM orders WHERE city = 'Paris'"]


def test_a_union_all_that_repeats_a_one_row_answer_is_a_duplicate(catalog) -> None:
    # One entity per UNION ALL branch, the same entity twice: the SQL's shape excuses nothing.
    one = "SELECT city FROM orders WHERE amount IS NOT NULL ORDER BY amount DESC LIMIT 1"
    sql = f"SELECT * FROM ({one}) AS a UNION ALL SELECT * FROM ({one}) AS b"
    report = checks(catalog, "Which order city has the largest amount?", sql, ["city"], [["Paris"], ["Paris"]])
    assert report.names == ["duplicate_rows"]
    assert "1 of 2 rows repeat another row" in report.lines()[0]
    two = "SELECT city FROM cities WHERE city = 'Paris' UNION ALL SELECT city FROM cities WHERE city = 'Lyon'"
    assert checks(catalog, "Which cities are these?", two, ["city"], [["Paris"], ["Lyon"]]).names == []


def test_a_row_of_nulls_from_scalar_subqueries_names_the_filter_that_found_nothing(catalog) -> None:
    wrong = ("SELECT ABS((SELECT sum(amount) FROM orders WHERE city = 'Pari') - "
             "(SELECT sum(amount) FROM orders WHERE city = 'Lyon')) AS diff")
    report = checks(catalog, "How much more did Paris order than Lyon?", wrong, ["diff"], [[""]])
    assert report.names == ["empty_result"], report.lines()  # not also all_null_column: one fact, one line
    line = report.lines()[0]
    assert "every cell" in line and "NULL" in line
    assert "`SELECT SUM(amount) FROM orders WHERE city = 'Pari'` matches 0 rows" in line
    assert "without `city = 'Pari'`: 4 rows (nearest existing values: 'Paris'" in line
    right = wrong.replace("'Pari'", "'Paris'")
    assert checks(catalog, "How much more did Paris order than Lyon?", right, ["diff"], [["14.5"]]).names == []


def test_a_null_row_with_no_filter_to_blame_still_says_every_cell_is_null(catalog) -> None:
    sql = "SELECT max(TRY_CAST(city AS INTEGER)) AS m FROM orders"
    report = checks(catalog, "What is the largest city number?", sql, ["m"], [[""]])
    assert report.names == ["empty_result"]
    assert "every cell" in report.lines()[0]


def test_a_large_answer_is_checked_on_a_sample_and_the_line_says_so(catalog) -> None:
    # 1,000 rows kept of a 1,000,000-row answer: counts from the sample are marked as such;
    # NULL counts come from the full read (non_null), so they are exact.
    sample = [[str(k % 400), ""] for k in range(1000)]
    ctx = AnswerContext("Which orders are there?", 'result = run_sql("SELECT order_id, note FROM orders")',
                        ["SELECT order_id, note FROM orders"], ["order_id", "note"], sample, catalog,
                        total_rows=1_000_000, non_null=[1_000_000, 0])
    report = run_answer_checks(ctx)
    assert report.names == ["duplicate_rows", "all_null_column"]
    duplicates, nulls = report.lines()
    assert "600 of 1000 rows repeat another row" in duplicates
    assert "(counted in the first 1,000 of 1,000,000 rows: a sample)" in duplicates
    assert "is NULL in all 1000000 rows" in nulls and "sample" not in nulls
    whole = AnswerContext("?", "", ["SELECT 1"], ["a"], [["1"], ["1"]], catalog, total_rows=2, non_null=[2])
    assert "sample" not in run_answer_checks(whole).lines()[0]


def test_a_null_typed_into_the_select_list_is_named_even_when_every_cell_is_null(catalog) -> None:
    # The right answer is itself a row of NULLs (a filter that matches nothing, as some gold
    # answers are); the column added as a NULL literal is still an extra column.
    base = "SELECT sum(amount) AS total FROM orders WHERE city = 'Rome'"
    wrong = f"SELECT *, CAST(NULL AS VARCHAR) AS joined_value FROM ({base}) AS answer"
    report = checks(catalog, "What is the total amount of the orders from Rome?", wrong,
                    ["total", "joined_value"], [["", ""]])
    assert report.names == ["empty_result", "all_null_column"], report.lines()
    assert "'joined_value'" in report.lines()[1] and "'total'" not in report.lines()[1]
    assert checks(catalog, "What is the total amount of the orders from Rome?", base, ["total"],
                  [[""]]).names == ["empty_result"]
