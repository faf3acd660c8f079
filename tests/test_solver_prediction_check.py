"""The prediction self-check, read the way the official scorer reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.solver import prediction_check
from datasolver.solver.prediction_check import check_prediction

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

CASES = [
        (b"a,b\n1,2\n3,4\n", (2, 2), [2, 2], None),
        (b"\xef\xbb\xbfa\n1\n", (1, 1), [1], None),  # BOM allowed
        (b"a,b\n1,NULL\n2,nan\n3, <NA> \n", (3, 2), [3, 0], "column 'b' is entirely null"),
        (b"a,b\n1,2\n1,2\n1,2\n", (3, 2), [3, 3], "2 duplicate row(s)"),
        (b",a\n0,x\n1,y\n", (2, 2), [2, 2], "first column '' looks like a leaked row index"),
        (b"Unnamed: 0,a\n0,x\n", (1, 2), [1, 1], "looks like a leaked row index"),
        (b"a,b\n1,2\n3\n", (2, 2), [2, 1], "field count different from the header"),
        (b"a,a\n1,2\n", (1, 2), [1, 1], "repeated column name(s): 'a'"),
        (b"a\n", (0, 1), [0], "no rows"),
        (b"", (0, 0), [], "the file is empty"),
        (b"a\n\xff\n", (0, 0), [], "not UTF-8"),
        (b"k,n\n0,5\n1,6\n2,7\n", (3, 2), [3, 3], None),  # a 0..n-1 key column is not flagged
        (b"a,b\n1,2\n\n3,4\n", (3, 2), [2, 2], "field count different from the header"),  # a blank line
        (b'a,b\n"x\ny",2\n', (1, 2), [1, 1], None),  # a line break inside a quoted value
        (b"a,b\r\n1,2\r\n1, \r\n", (2, 2), [2, 1], None),
]


@pytest.mark.parametrize(("content", "shape", "non_null", "warning"), CASES)
def test_check_prediction(tmp_path: Path, content: bytes, shape, non_null, warning) -> None:
    path = tmp_path / "prediction.csv"
    path.write_bytes(content)
    check = check_prediction(path)
    assert check.shape == shape
    assert check.non_null == non_null
    if warning is None:
        assert check.warnings == []
    else:
        assert any(warning in w for w in check.warnings), check.warnings


@pytest.mark.parametrize("answer_checked", [False, True])
@pytest.mark.parametrize("content", [c[0] for c in CASES])
def test_a_large_file_read_by_arrow_says_what_the_row_by_row_read_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, answer_checked: bool) -> None:
    path = tmp_path / "prediction.csv"
    path.write_bytes(content)
    row_by_row = check_prediction(path, answer_checked=answer_checked)
    monkeypatch.setattr(prediction_check, "BULK_BYTES", 0)  # every file counts as large
    assert check_prediction(path, answer_checked=answer_checked) == row_by_row


def test_a_clean_large_file_is_not_read_row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prediction.csv"
    path.write_text("id,v,w\n" + "".join(f"{k},{k % 7 or ''},x\n" for k in range(5000)) + "1,1,x\n", encoding="utf-8")
    monkeypatch.setattr(prediction_check, "BULK_BYTES", 1000)
    monkeypatch.setattr(prediction_check, "SAMPLE_ROWS", 100)

    def row_by_row(*args, **kwargs):  # the row-by-row reader asks this of every cell; Arrow never does
        raise AssertionError("a clean large file went row by row")

    monkeypatch.setattr(prediction_check, "is_null", row_by_row)
    check = check_prediction(path)
    assert check.shape == (5001, 3) and check.non_null == [5001, 4286, 5001]
    assert check.warnings == ["1 duplicate row(s): check joins, or use DISTINCT if the question wants unique rows"]
    assert len(check.head) == prediction_check.HEAD_ROWS and len(check.sample) == 100 and check.sampled
    assert check_prediction(path, answer_checked=True).warnings == []  # the CHECK lines say it
