"""The Jaccard text scorer for `ask` answers and its tokenization."""

from __future__ import annotations

import pytest

from datasolver.eval import score_text
from datasolver.eval.text import answer_tokens

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("南京市", {"南", "京", "市"}),  # CJK by character
        ("The Total", {"the", "total"}),  # Latin by word, case folded
        ("共成交12块地", {"共", "成", "交", "12", "块", "地"}),
        ("1,234.50 万元", {"1234.5", "万", "元"}),  # grouping commas, trailing zeros
        ("5.00 vs 5", {"5", "vs"}),
        ("12%", {"12", "%"}),  # units kept
        ("３５％", {"35", "%"}),  # full width via NFKC
        ("25℃", {"25", "°", "c"}),
        ("$5", {"$", "5"}),
        ("¥3.0", {"¥", "3"}),
        ("20 km", {"20", "km"}),
        ("-5 度", {"-5", "度"}),
        ("2020-2021", {"2020", "2021"}),  # a range dash is not a minus
        ("温度为-5", {"温", "度", "为", "-5"}),  # after CJK or a space it is a minus
        ("don't stop", {"don't", "stop"}),
        ("Hello, world! (ok)", {"hello", "world", "ok"}),  # punctuation dropped
        ("", set()),
    ],
)
def test_answer_tokens(text: str, tokens: set[str]) -> None:
    assert answer_tokens(text) == tokens


@pytest.mark.parametrize(
    ("prediction", "reference", "score"),
    [
        ("共12个", "共12个", 1.0),
        ("共 12 个。", "共12个", 1.0),  # spacing and punctuation ignored
        ("12个", "共12个", 2 / 3),
        ("1,234.5元", "1234.50 元", 1.0),
        ("Beijing", "beijing", 1.0),
        ("12%", "12", 0.5),  # the unit matters
        ("13", "12", 0.0),
        ("", "", 1.0),
        ("", "12", 0.0),
    ],
)
def test_score_text(prediction: str, reference: str, score: float) -> None:
    assert score_text(prediction, reference) == pytest.approx(score)


def test_score_text_is_symmetric() -> None:
    assert score_text("南京 2022年", "南京市") == score_text("南京市", "南京 2022年")
