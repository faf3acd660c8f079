"""Question hygiene and answer discipline: pure functions, checked by exact strings."""

from __future__ import annotations

import pytest

from datasolver.ask import require_question
from datasolver.ask.answer import fill_template, tidy_answer
from datasolver.ask.errors import EmptyQuestion
from datasolver.ask.question import clean_question
from datasolver.ask.render import answer_data, format_value
from datasolver.data import QueryResult

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("How many orders?", "How many orders?"),
        ("  How   many\n\norders? ", "How many orders?"),
        ("How\u200b many\ufeff orders?", "How many orders?"),
        ("Question: How many orders?", "How many orders?"),
        ("问题：一共有多少订单？", "一共有多少订单？"),
        ('"How many orders?"', "How many orders?"),
        ("`How many orders?`", "How many orders?"),
        ("How many orders???", "How many orders?"),
        ("How many orders? How many orders?", "How many orders?"),
        ("How many orders? how many  orders?", "How many orders?"),
        ("How many orders in 2023 How many orders in 2023", "How many orders in 2023"),
        ("一共有多少订单？一共有多少订单？", "一共有多少订单？"),
        ("Average is 3.5? List it. List it.", "Average is 3.5? List it."),
        ("Which regions? Which products?", "Which regions? Which products?"),
    ],
)
def test_clean_question(raw: str, expected: str) -> None:
    assert clean_question(raw).text == expected


def test_cleaning_is_recorded() -> None:
    notes = clean_question("Q: Which region?? Which region??").notes
    assert notes == ["removed a label or wrapping quotes", "shortened repeated ? or !", "dropped 1 repeated sentence(s)"]


@pytest.mark.parametrize("raw", ["", "   ", "???", "\u200b\u200b", None, "“ ”"])
def test_empty_questions_are_refused(raw) -> None:
    with pytest.raises(EmptyQuestion, match="the question is empty"):
        require_question(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("North", "North"),
        ("Answer: North", "North"),
        ("**North**", "North"),
        ('"North, South"', "North, South"),
        ("答案：北京", "北京"),
        ("- North\n- South\n- East", "North, South, East"),
        ("The regions:\n1. North\n2. South", "The regions: North, South"),
        ("12.5  kg", "12.5 kg"),
    ],
)
def test_tidy_answer(raw: str, expected: str) -> None:
    assert tidy_answer(raw) == expected


def test_fill_template_accepts_common_spellings() -> None:
    for template in ("All: {DATA}.", "All: {{DATA}}.", "All: { data }."):
        assert fill_template(template, "a, b") == "All: a, b."


def test_answer_data_rows_and_row_format() -> None:
    result = QueryResult(["region", "total"], ["VARCHAR", "DOUBLE"], [("North", 12.0), ("South", 1 / 3)], 2)
    assert answer_data(result) == "North 12, South 0.3333"
    assert answer_data(result, "{region} ({total} t)") == "North (12 t), South (0.3333 t)"


@pytest.mark.parametrize(("value", "text"), [(None, ""), (3, "3"), (2.50, "2.5"), (1e6, "1000000"), (True, "true")])
def test_format_value(value, text) -> None:
    assert format_value(value) == text
