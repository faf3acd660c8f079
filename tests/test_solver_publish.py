"""One way to a published answer: one path, one atomic writer, one status vocabulary."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.solver import STATUSES, has_prediction, prediction_path, publish_prediction

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_publish_writes_the_one_prediction_path_atomically(tmp_path: Path) -> None:
    source = tmp_path / "workdir" / "prediction.csv"
    source.parent.mkdir()
    source.write_text("a\n1\n", encoding="utf-8")
    out = tmp_path / "out"
    assert not has_prediction(out, "t1")
    path = publish_prediction(source, out, "t1")
    assert path == prediction_path(out, "t1") == out / "t1" / "prediction.csv"
    assert path.read_text(encoding="utf-8") == "a\n1\n" and has_prediction(out, "t1")
    assert [p.name for p in path.parent.iterdir()] == ["prediction.csv"]  # no temporary left behind


def test_a_failed_copy_leaves_the_earlier_prediction_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    prediction_path(out, "t1").parent.mkdir(parents=True)
    prediction_path(out, "t1").write_text("old\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError):
        publish_prediction(tmp_path / "missing.csv", out, "t1")
    assert prediction_path(out, "t1").read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in (out / "t1").iterdir()] == ["prediction.csv"]


def test_an_empty_file_is_not_a_prediction(tmp_path: Path) -> None:
    prediction_path(tmp_path, "t1").parent.mkdir()
    prediction_path(tmp_path, "t1").write_text("", encoding="utf-8")
    assert not has_prediction(tmp_path, "t1")


def test_the_status_vocabulary() -> None:
    assert STATUSES == ("solved", "fallback", "failed", "skipped")
