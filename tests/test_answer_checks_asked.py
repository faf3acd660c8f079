"""The Solver's asked-items check (solver/answer_checks/asked.py): a ratio asked for has a ratio column,
a ratio asked "and … as well" has more than the ratio, and no column the question neither names nor
names a value of stands beside the one value asked for. General examples (sales, houses)."""

from __future__ import annotations

import pytest

from datasolver.solver.answer_checks import AnswerContext, run_answer_checks
from datasolver.solver.answer_checks import asked


def names(question: str, sql: str, columns: list[str], rows: list[list[str]]) -> list[str]:
    return run_answer_checks(AnswerContext(question, "", [sql], columns, rows)).names


RATIO_Q = "What is the ratio of returned orders to all orders in 2021?"
RATIO_ALSO_Q = "What is the share of returned orders in 2021 and 2022, and the annual order numbers as well?"


@pytest.mark.parametrize("question, sql, columns, rows, flagged", [
    # the query divides, but only inside a filter: no column holds the ratio
    (RATIO_Q, "SELECT count(*) AS returned, (SELECT count(*) FROM o) AS total FROM o WHERE amount / 2 > 1",
     ["returned", "total"], [["3", "10"]], True),
    (RATIO_Q, "SELECT count(*) FILTER (WHERE returned) / count(*) AS r FROM o", ["r"], [["0.3"]], False),
    (RATIO_Q, "SELECT return_rate FROM summary WHERE y = 2021", ["return_rate"], [["0.3"]], False),
    # the ratio alone, when the numbers are asked as well
    (RATIO_ALSO_Q, "SELECT y, sum(r) / count(*) AS share FROM o GROUP BY y", ["share"], [["0.3"], ["0.4"]], True),
    (RATIO_ALSO_Q, "SELECT y, count(*) AS orders, sum(r) / count(*) AS share FROM o GROUP BY y",
     ["y", "orders", "share"], [["2021", "10", "0.3"], ["2022", "12", "0.4"]], False),
])
def test_a_ratio_asked_for_has_its_column(question: str, sql: str, columns: list, rows: list, flagged: bool) -> None:
    assert ("asked_items" in names(question, sql, columns, rows)) is flagged


@pytest.mark.parametrize("question, columns, rows, flagged", [
    # the price asked, the seller's name returned beside it
    ("What is the highest price of the houses sold in Lyon?", ["seller", "price"], [["Ann Roe", "900"]], True),
    ("请问里昂成交地块的最高价格是多少？", ["地块名称", "最高价格"], [["玫瑰园", "900"]], True),
    ("What is the highest price of the houses sold in Lyon?", ["price"], [["900"]], False),
    # the question asks which house: its name is asked
    ("Which house sold in Lyon has the highest price?", ["house", "price"], [["Villa Rosa", "900"]], False),
    # a label the question names itself (the city) is no stray column
    ("What is the highest price of the houses sold in Lyon?", ["city", "price"], [["Lyon", "900"]], False),
    # several values asked: names label the rows
    ("List the price of each house sold in Lyon", ["house", "price"], [["Villa Rosa", "900"], ["Casa", "5"]], False),
])
def test_an_unasked_column_beside_the_one_value_asked(question: str, columns: list, rows: list, flagged: bool) -> None:
    sql = f"SELECT {', '.join(columns)} FROM houses WHERE city = 'Lyon' ORDER BY price DESC LIMIT 1"
    assert ("asked_items" in names(question, sql, columns, rows)) is flagged


def test_asked_items_holds_to_its_bound_of_columns() -> None:
    question = "What is the highest price of the houses sold in Lyon?"
    columns = ["seller", "price"] + [f"n{i}" for i in range(asked.MAX_COLUMNS)]
    row = ["Ann Roe", "900"] + ["1"] * asked.MAX_COLUMNS
    assert asked.asked_items(AnswerContext(question, "", ["SELECT 1"], columns, [row])) == []
    assert [f.name for f in asked.asked_items(AnswerContext(question, "", ["SELECT 1"], columns[:2], [row[:2]]))] == [
        "asked_items"]
