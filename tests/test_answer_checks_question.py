"""Question-shape answer checks (solver/answer_checks/question.py): a range of years answered with
one row, "which of A or B" answered with both, a ratio answered with a count; and two columns computed by the same expression."""

from __future__ import annotations

import pytest

from datasolver.solver.answer_checks import AnswerContext, run_answer_checks

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def names(question: str, sql: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    return run_answer_checks(AnswerContext(question, "", [sql], columns, rows)).names


@pytest.mark.parametrize("question, rows, flagged", [
    ("请问2019年至2022年每年深圳市南山区的土地成交总价分别是多少？", [["2022", "1000"]], True),
    ("请问2019年至2022年每年深圳市南山区的土地成交总价分别是多少？",
     [["2019", "1"], ["2020", "2"], ["2021", "3"], ["2022", "4"]], False),
    ("What was the revenue for each year between 2019 and 2021?", [["2021", "5"]], True),
    ("What was the total revenue between 2019 and 2021?", [["15"]], False),  # one total is asked
    ("Monthly sales in Q3 2020?", [["2020-09", "8"]], True),
])
def test_a_range_of_periods_answered_with_fewer_rows(question: str, rows: list, flagged: bool) -> None:
    sql = "SELECT y, sum(v) FROM t WHERE y = 2022 GROUP BY y"
    found = names(question, sql, ["year", "value"][: len(rows[0])], rows)
    assert ("range_rows" in found) is flagged


@pytest.mark.parametrize("question, rows, flagged", [
    ("Which of Alpha Corp or Beta Ltd had the lower profit in 2021?", [["Alpha Corp"], ["Beta Ltd"]], True),
    ("Which of Alpha Corp or Beta Ltd had the lower profit in 2021?", [["Alpha Corp"]], False),
    ("请问万科和保利哪个公司2021年的净利润更低？", [["万科"], ["保利"]], True),
    ("请问万科和保利2021年的净利润分别是多少？", [["万科", "1"], ["保利", "2"]], False),
    ("List the names of the businesses, ordered alphabetically.", [["A"], ["B"]], False),
])
def test_which_one_of_two_answered_with_both(question: str, rows: list, flagged: bool) -> None:
    found = names(question, "SELECT name FROM t WHERE name IN ('a', 'b')", ["name", "v"][: len(rows[0])], rows)
    assert ("both_of_two" in found) is flagged


@pytest.mark.parametrize("question, sql, flagged", [
    ("What is the ratio of papers published in 2020 to the total number of papers?",
     "SELECT count(*) FROM paper WHERE year = 2020", True),
    ("What is the ratio of papers published in 2020 to the total number of papers?",
     "SELECT count(*) FILTER (WHERE year = 2020) / count(*) FROM paper", False),
    ("请问2022年住宅用地成交数量的占比是多少？", "SELECT count(*) FROM land WHERE 用途 = '住宅'", True),
    ("请问该项目的绿化率是多少？", "SELECT 绿化率 FROM land", False),  # a column named …率, no ratio asked
])
def test_a_ratio_answered_with_a_count(question: str, sql: str, flagged: bool) -> None:
    assert ("ratio_count" in names(question, sql, ["v"], [["3"]])) is flagged


@pytest.mark.parametrize("sql, columns, flagged", [
    # As the real 1.5B model answered dev-en advising_7 ("How many course offerings have a final exam and
    # how many do not?"): one count under two names.
    ("SELECT COUNT(*) AS \"有最终考试的课程数量\", COUNT(*) AS \"没有最终考试的课程数量\" FROM course_offering "
     "WHERE has_final_exam = TRUE", ["有最终考试的课程数量", "没有最终考试的课程数量"], True),
    ("SELECT count(*) FILTER (WHERE has_final_exam) AS yes, count(*) FILTER (WHERE NOT has_final_exam) AS no "
     "FROM course_offering", ["yes", "no"], False),
    ("SELECT has_final_exam, count(offering_id) AS n FROM course_offering GROUP BY has_final_exam",
     ["has_final_exam", "n"], False),
    ("SELECT name, name AS again FROM t", ["name", "again"], True),
    ("SELECT * FROM t", ["a", "b"], False),
])
def test_two_columns_computed_by_the_same_expression(sql: str, columns: list, flagged: bool) -> None:
    found = names("How many course offerings have a final exam and how many do not?", sql, columns, [["3", "3"]])
    assert ("same_expression" in found) is flagged


def test_the_same_expression_line_names_both_columns_and_what_to_do() -> None:
    report = run_answer_checks(AnswerContext("How many have a final exam and how many do not?", "", [
        "SELECT COUNT(*) AS yes, COUNT(*) AS no FROM course_offering WHERE has_final_exam = TRUE"],
        ["yes", "no"], [["3", "3"]]))
    [line] = [f.line() for f in report.findings if f.name == "same_expression"]
    assert line.startswith("CHECK same_expression: columns 'yes' and 'no' are the same expression `COUNT(*)`")
    assert "FILTER (WHERE" in line and "GROUP BY" in line
