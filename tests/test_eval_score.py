"""The official task score over small hand-made CSVs: reading rules, matching, penalty."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.eval import read_strict_csv, score_files
from datasolver.eval.errors import InvalidGold, RaggedRow
from datasolver.eval.score import INVALID, MISSING, SCORED

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

GOLD = "city,total\nFes,16405.6\nRabat,13762.58\n"


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def _score(tmp_path: Path, pred: str, gold: str = GOLD, penalty: float = 0.1):
    return score_files(_write(tmp_path / "pred.csv", pred), _write(tmp_path / "gold.csv", gold), penalty)


@pytest.mark.parametrize(
    ("pred", "score"),
    [
        (GOLD, 1.0),
        ("total,city\n16405.60,Fes\n13762.580,Rabat\n", 1.0),  # column order and formatting
        ("a,b\nRabat,13762.58\nFes,16405.6\n", 1.0),  # names and row order
        ("城市,金额\n\"Rabat\",\"13,762.58\"\nFes,16405.60\n", 1.0),  # quoting, grouping commas
        ("city\nFes\nRabat\n", 0.5),  # half the gold columns
        ("city,total\nFes,16405.6\nRabat,13762.57\n", 0.45),  # one wrong value zeroes the column (and it is extra)
        ("city,total\nFes,16405.6\n", 0.0),  # a missing row zeroes every column
        ("city,total\nFes,16405.6\nRabat,13762.58\nRabat,13762.58\n", 0.0),  # a duplicated row too
        ("city,total\nfes,16405.6\nrabat,13762.58\n", 0.45),  # text is case-sensitive
    ],
)
def test_scores(tmp_path: Path, pred: str, score: float) -> None:
    assert _score(tmp_path, pred).score == pytest.approx(score)


def test_extra_column_penalty(tmp_path: Path) -> None:
    result = _score(tmp_path, "city,total,note\nFes,16405.6,x\nRabat,13762.58,y\n")
    assert (result.matched, result.gold_cols, result.pred_cols, result.extra) == (2, 2, 3, 1)
    assert result.score == pytest.approx(1 - 0.1 * 1 / 3)
    assert result.reason == "1 extra column"


def test_penalty_is_configurable(tmp_path: Path) -> None:
    pred = "city,total,note,n2\nFes,16405.6,x,1\nRabat,13762.58,y,2\n"
    assert _score(tmp_path, pred, penalty=0.0).score == pytest.approx(1.0)
    assert _score(tmp_path, pred, penalty=0.5).score == pytest.approx(1 - 0.5 * 2 / 4)


def test_score_never_negative(tmp_path: Path) -> None:
    result = _score(tmp_path, "x,y,z\n1,2,3\n4,5,6\n", penalty=0.5)
    assert result.matched == 0
    assert result.score == 0.0


def test_extra_column_mixed_with_partial_recall(tmp_path: Path) -> None:
    result = _score(tmp_path, "city,wrong\nFes,1\nRabat,2\n")
    assert result.score == pytest.approx(0.5 - 0.1 * 1 / 2)


@pytest.mark.parametrize(
    ("gold", "pred", "matched"),
    [
        # two identical gold columns need two identical predicted ones
        ("a,b\n1,1\n2,2\n", "x\n1\n2\n", 1),
        ("a,b\n1,1\n2,2\n", "x,y\n1,1\n2,2\n", 2),
        # one predicted column cannot be matched twice; the extra copy costs
        ("a\n1\n2\n", "x,y\n1,1\n2,2\n", 1),
        # duplicate values inside a column are a multiset, not a set
        ("a\n1\n1\n2\n", "x\n1\n2\n2\n", 0),
        ("a\n1\n1\n2\n", "x\n2\n1\n1\n", 1),
    ],
)
def test_duplicates_match_with_multiplicity(tmp_path: Path, gold: str, pred: str, matched: int) -> None:
    assert _score(tmp_path, pred, gold).matched == matched


def test_columns_matched_one_to_one_regardless_of_names(tmp_path: Path) -> None:
    # Gold "a" and "b" have the same values: either predicted column may match either one.
    result = _score(tmp_path, "b,a\n1,5\n2,6\n", "a,b,c\n1,1,5\n2,2,6\n")
    assert result.matched == 2
    assert [c.matched_name for c in result.columns] == ["b", None, "a"]


def test_ragged_row_scores_zero(tmp_path: Path) -> None:
    result = _score(tmp_path, "city,total\nFes,16405.6\nRabat,13762.58,extra\n")
    assert (result.score, result.status) == (0.0, INVALID)
    assert "line 3: 3 fields, header has 2" in result.reason


def test_short_row_scores_zero(tmp_path: Path) -> None:
    assert _score(tmp_path, "city,total\nFes\nRabat,13762.58\n").score == 0.0


def test_blank_line_is_a_ragged_row(tmp_path: Path) -> None:
    # A blank line is a row with zero fields, even in a one-column file.
    result = _score(tmp_path, "city\nFes\n\nRabat\n", "city\nFes\n\"\"\nRabat\n")
    assert result.score == 0.0 and "0 fields" in result.reason


def test_quoted_empty_cell_in_one_column_file(tmp_path: Path) -> None:
    result = _score(tmp_path, "x\nFes\n\"\"\n", "city\nFes\nnull\n")
    assert result.score == 1.0


def test_quoted_newline_inside_cell(tmp_path: Path) -> None:
    assert _score(tmp_path, 'a\n"x\r\ny"\n', 'a\n"x\ny"\n').score == 1.0


def test_missing_prediction_scores_zero(tmp_path: Path) -> None:
    result = score_files(tmp_path / "nope.csv", _write(tmp_path / "gold.csv", GOLD))
    assert (result.score, result.status, result.reason, result.gold_cols) == (0.0, MISSING, "missing prediction", 2)


def test_bom_allowed(tmp_path: Path) -> None:
    result = _score(tmp_path, "\ufeffcity,total\nFes,16405.6\nRabat,13762.58\n")
    assert result.score == 1.0 and result.status == SCORED


def test_not_utf8_scores_zero(tmp_path: Path) -> None:
    pred = _write(tmp_path / "pred.csv", "城市\n南京\n", encoding="gbk")
    result = score_files(pred, _write(tmp_path / "gold.csv", "城市\n南京\n"))
    assert result.score == 0.0 and "not UTF-8" in result.reason


@pytest.mark.parametrize("pred", ["", "\n", "\nFes\n"])
def test_header_required(tmp_path: Path, pred: str) -> None:
    result = _score(tmp_path, pred)
    assert result.score == 0.0 and "no header" in result.reason


def test_header_only_matches_header_only(tmp_path: Path) -> None:
    assert _score(tmp_path, "x,y\n", "a,b\n").score == 1.0
    assert _score(tmp_path, "x,y\n", GOLD).score == 0.0


def test_bad_quoting_scores_zero(tmp_path: Path) -> None:
    result = _score(tmp_path, 'city,total\n"Fes"x,1\n')
    assert result.score == 0.0 and "malformed CSV" in result.reason


def test_missing_gold_raises(tmp_path: Path) -> None:
    with pytest.raises(InvalidGold, match="gold file not found"):
        score_files(_write(tmp_path / "pred.csv", GOLD), tmp_path / "gold.csv")


def test_ragged_gold_raises(tmp_path: Path) -> None:
    with pytest.raises(InvalidGold, match="line 2"):
        _score(tmp_path, GOLD, gold="a,b\n1\n")


def test_negative_penalty_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="penalty"):
        _score(tmp_path, GOLD, penalty=-0.1)


def test_read_strict_csv_reports_line(tmp_path: Path) -> None:
    with pytest.raises(RaggedRow) as info:
        read_strict_csv(_write(tmp_path / "t.csv", "a,b\n1,2\n3\n"))
    assert (info.value.line, info.value.fields, info.value.expected) == (3, 1, 2)


def test_explanation_names_the_wrong_value(tmp_path: Path) -> None:
    result = _score(tmp_path, "total,city,extra\n16405.6,Fes,1\n13762.57,Rabat,2\n")
    matched, wrong = result.columns
    assert matched.matched and matched.matched_name == "city"
    closest = wrong.closest
    assert not wrong.matched and closest is not None
    assert (closest.pred_name, closest.pred_rows, closest.gold_rows, closest.common) == ("total", 2, 2, 1)
    assert closest.first_difference == (0, "13762.58", "13762.57")
    assert (closest.missing, closest.unexpected) == (["13762.58"], ["13762.57"])
    assert result.reason == "1/2 gold columns unmatched; 2 extra columns"


def test_explanation_shows_row_count_difference(tmp_path: Path) -> None:
    result = _score(tmp_path, "city,total\nFes,16405.6\n")
    assert result.reason == "2/2 gold columns unmatched; 2 extra columns; 1 rows, gold has 2"
    closest = result.columns[0].closest
    assert closest is not None and closest.pred_name == "city"
    assert (closest.pred_rows, closest.gold_rows, closest.first_difference) == (1, 2, (1, "Rabat", None))


def test_explanation_points_at_a_column_matched_elsewhere(tmp_path: Path) -> None:
    # Gold wants the same column twice; the one copy predicted is already used.
    result = _score(tmp_path, "x\n1\n2\n", "a,b\n1,1\n2,2\n")
    closest = result.columns[1].closest
    assert closest is not None and closest.already_matched and closest.first_difference is None
