"""The one clip helper: at most `limit` characters with "…", or a counted cut line."""

from __future__ import annotations

import pytest

from datasolver.clip import clip

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_short_text_is_unchanged() -> None:
    assert clip("abc", 3) == "abc"
    assert clip("abc", 3, counted=True) == "abc"


def test_a_plain_cut_fits_the_limit_with_its_mark() -> None:
    assert clip("abcdef", 4) == "abc…"
    assert len(clip("x" * 500, 400)) == 400
    assert clip("abcdef", 4, keep_end=True) == "…def"
    assert clip("abcdef", 1) == "…"


def test_a_counted_cut_keeps_the_limit_and_says_how_much_went() -> None:
    assert clip("abcdef", 2, counted=True) == "ab\n… (4 more characters cut)"
    assert clip("abcdef", 2, note="ask for less") == "ab\n… (4 more characters cut; ask for less)"


def test_a_name_list_is_cut_with_a_count_of_what_was_left_out():
    from datasolver.clip import clip_names

    assert clip_names(["a", "b"], 2) == "a, b"
    assert clip_names(["a", "b", "c", "d"], 2) == "a, b, … (+2 more)"
    assert clip_names([], 3) == ""
