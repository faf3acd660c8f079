"""Rows from OCR boxes, token comparison and the number check: pure functions on hand-made input."""

from __future__ import annotations

import pytest

from datasolver.video import unsupported_numbers
from datasolver.video.numbers import numbers_in
from datasolver.video.layout import group_rows, has_new_token, layout_text, reading_text
from datasolver.video.ocr import TextBox

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def box(text: str, x: float, y: float, w: float = 60, h: float = 20) -> TextBox:
    return TextBox(text, 0.99, x, y, x + w, y + h)


def test_boxes_on_one_line_form_a_row_left_to_right() -> None:
    boxes = [box("6000", 300, 52), box("amount", 10, 50), box(">=", 150, 49), box("阈值 Threshold", 300, 10),
             box("字段 Field", 10, 11)]
    rows = group_rows(boxes)
    assert layout_text(rows) == "字段 Field | 阈值 Threshold\namount | >= | 6000"
    assert reading_text(rows) == "字段 Field 阈值 Threshold amount >= 6000"


@pytest.mark.parametrize("text, before, new", [
    ("amount >= 6000", "amount >= 5000", True),  # one changed value
    ("amount >= 5000", "amount >= 5000", False),
    ("amount >= 5000 x", "amount >= 5000", False),  # a 1-character token does not count
    ("阈值 5000", "阈值 5000 Apply", False),  # losing text is not a new token
    ("销售额 5000", "阈值 5000", True),
])
def test_new_tokens(text: str, before: str, new: bool) -> None:
    assert has_new_token(text, before) is new


@pytest.mark.parametrize("model_text, ocr, flagged", [
    ("The threshold is 6,000 and the count 42.", "阈值 6000 订单数 42", []),
    ("The threshold is 5000.", "阈值 6000", ["5000"]),
    ("rate 12.50% of 3", "rate 12.5% of 3", []),
    ("total 1,234.0", "total 1234", []),
    ("-7 and 8", "8", ["-7"]),
])
def test_numbers_not_on_the_frame_are_flagged(model_text: str, ocr: str, flagged: list[str]) -> None:
    assert unsupported_numbers(model_text, ocr) == flagged


def test_numbers_are_canonical() -> None:
    assert numbers_in("12,345 and 6000.00 and 7%") == {"12345", "6000", "7%"}
