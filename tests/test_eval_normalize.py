"""Each normalization rule of the official scorer, pinned by a table of cells."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal

import pytest

from datasolver.eval.normalize import normalize_cell

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        # finite decimals → 2 places, half-up
        ("000001", "1.00"),
        ("1", "1.00"),
        ("5", "5.00"),
        ("5.00", "5.00"),
        ("1e3", "1000.00"),
        ("1E3", "1000.00"),
        ("1000.00", "1000.00"),
        ("2.675", "2.68"),  # exact decimal: no float 2.67499… surprise
        ("2.665", "2.67"),
        ("-2.675", "-2.68"),  # half-up means away from zero on ties
        ("2.674999", "2.67"),
        ("0.005", "0.01"),
        (".5", "0.50"),
        ("+7", "7.00"),
        ("13762.579999999998", "13762.58"),
        ("-0", "0.00"),
        ("-0.001", "0.00"),  # choice: negative zero after rounding is written 0.00
        ("1e-7", "0.00"),
        ("123456789012345678901234567890.125", "123456789012345678901234567890.13"),
        # grouping commas
        ("1,234.5", "1234.50"),
        ("1,234", "1234.00"),
        ("-1,234,567.891", "-1234567.89"),
        ("1,2", "1,2"),  # choice: not thousands grouping, so text
        ("12,34", "12,34"),
        ("a,b", "a,b"),
        # null-like → empty
        ("", ""),
        ("null", ""),
        ("NULL", ""),
        ("None", ""),
        ("none", ""),
        ("nan", ""),
        ("NaN", ""),
        ("NaT", ""),
        ("nat", ""),
        ("<NA>", ""),
        ("<na>", ""),
        ("  null  ", ""),
        ("   ", ""),
        ("n/a", "n/a"),  # not in the list
        # not finite → text
        ("Infinity", "Infinity"),
        ("inf", "inf"),
        # datetimes → ISO; aware ones to UTC Z, fraction dropped
        ("2024-01-02 03:04:05", "2024-01-02T03:04:05"),
        ("2024-01-02T03:04:05", "2024-01-02T03:04:05"),
        ("2024-01-02 03:04:05.5", "2024-01-02T03:04:05.500000"),
        ("2024-01-02 03:04:05+08:00", "2024-01-01T19:04:05Z"),
        ("2024-01-02T03:04:05+0800", "2024-01-01T19:04:05Z"),
        ("2024-01-02T03:04:05.999-05:00", "2024-01-02T08:04:05Z"),
        ("2024-01-02 03:04:05Z", "2024-01-02T03:04:05Z"),
        # dates in the four formats → YYYY-MM-DD
        ("2024-01-02", "2024-01-02"),
        ("2024/01/02", "2024-01-02"),
        ("13/01/2024", "2024-01-13"),  # %d/%m/%Y
        ("01/13/2024", "2024-01-13"),  # only %m/%d/%Y fits
        ("02/01/2024", "2024-01-02"),  # ambiguous: day-first, the listed order, wins
        ("2024-1-2", "2024-01-02"),  # strptime accepts single digits
        ("2024-02-30", "2024-02-30"),  # not a date: stays text
        ("2024-01", "2024-01"),
        ("20240102", "20240102.00"),  # digits are a number first
        # text: stripped, CRLF → LF, case kept
        ("  Abc  ", "Abc"),
        ("abc", "abc"),
        ("ABC", "ABC"),
        ("line1\r\nline2", "line1\nline2"),
        ("南京市", "南京市"),
        ("True", "True"),
    ],
)
def test_normalize_cell(cell: str, expected: str) -> None:
    assert normalize_cell(cell) == expected


def test_text_is_case_sensitive() -> None:
    assert normalize_cell("Beijing") != normalize_cell("beijing")


@pytest.mark.parametrize(
    ("left", "right"),
    [("000001", "1"), ("1e3", "1000.00"), ("5", "5.00"), ("1,234.5", "1234.50"), ("null", "<NA>")],
)
def test_equal_after_normalization(left: str, right: str) -> None:
    assert normalize_cell(left) == normalize_cell(right)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ""),
        (math.nan, ""),
        (3.0, "3.00"),
        (7, "7.00"),
        (Decimal("1.005"), "1.01"),
        (True, "True"),
        (datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
        (date(2024, 1, 2), "2024-01-02"),
        (b"abc", "abc"),
    ],
)
def test_python_values(value: object, expected: str) -> None:
    assert normalize_cell(value) == expected


def test_huge_exponent_does_not_expand() -> None:
    # A million-digit fixed-point string would be absurd; equal values still normalize equally.
    assert normalize_cell("1e999999") == normalize_cell("10e999998") == "1E+999999"
