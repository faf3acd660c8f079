"""The prediction self-check, read the way the official scorer reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.solver.checks import check_prediction


@pytest.mark.parametrize(
    ("content", "shape", "non_null", "warning"),
    [
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
    ],
)
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
