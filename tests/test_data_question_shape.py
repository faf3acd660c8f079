"""A question's shape: what its wording asks for, read once (`data/question_shape.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.data.question_shape import SHAPE_CHARS, QuestionShape, read_question
from datasolver.data.tasks import Task

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize("question, facts", [
    ("How many orders were shipped in 2023?",
     {"asks_one": False, "asks_many": False, "count": None, "quantity": True, "ratio": False}),
    ("List the top 5 customers by revenue", {"asks_many": True, "count": 5, "quantity": True}),
    ("前3名的城市是哪些？", {"asks_many": True, "count": 3}),
    ("Which one of the two stores, North or South, sold more?", {"asks_one": True, "asks_many": False,
                                                                 "which_of_two": True}),
    ("北京和上海哪个城市的人口更多？", {"asks_one": True, "which_of_two": True}),
    ("What are the product names and their prices?", {"asks_many": True, "which_of_two": False}),
    ("What share of orders were returned?", {"ratio": True, "also": False}),
    ("The share of returned orders, and the annual order numbers as well", {"ratio": True, "also": True}),
    ("退货率是多少，同时给出每年的订单数", {"also": True}),
    ("各产品销售额占比是多少？", {"ratio": True, "asks_many": True}),
    ("The average price, rounded to 2 decimals", {"rounding": True, "quantity": True}),
    ("What is the rank of customer 'Acme Ltd.' by spend?", {"rank": True, "quoted": frozenset({"Acme Ltd."})}),
    ("Which customer spent most?", {"quantity": False, "rank": False, "rounding": False}),
    ("Total sales for each year from 2019 to 2021", {"per_period": True, "periods": ("2019", "2020", "2021")}),
    ("2020年至2022年每年的订单数分别是多少？", {"per_period": True, "periods": ("2020", "2021", "2022")}),
    ("Monthly revenue in Q2 2022", {"per_period": True, "periods": ("2022-04", "2022-05", "2022-06")}),
    ("Revenue in 2022", {"per_period": False, "periods": ()}),
])
def test_a_question_reads_into_its_facts(question: str, facts: dict[str, object]) -> None:
    shape = read_question(question)
    assert {name: getattr(shape, name) for name in facts} == facts


def test_the_shape_keeps_the_dates_it_read() -> None:
    shape = read_question("Orders between March 2021 and 2022-05")
    assert [(d.kind, d.label) for d in shape.dates] == [("month", "2021-03"), ("month", "2022-05")]


def test_only_the_first_characters_are_read() -> None:
    padded = "x" * SHAPE_CHARS + " What share of orders were returned?"
    shape = read_question(padded)
    assert len(shape.text) == SHAPE_CHARS and not shape.ratio and not shape.quantity


def test_the_shape_is_frozen_and_the_task_carries_it_read_once(tmp_path: Path) -> None:
    task = Task("task_1", "List each region's total sales", tmp_path)
    assert isinstance(task.shape, QuestionShape) and task.shape.asks_many
    assert task.shape is task.shape  # read once
    with pytest.raises(AttributeError):
        task.shape.ratio = True  # type: ignore[misc]
