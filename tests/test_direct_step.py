"""The one direct step of both agents (`datasolver.direct_step`): what it decides without a model."""

from __future__ import annotations

import pytest

from datasolver.direct_step import Candidate, DirectOutcome, choose

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_a_passing_candidate_without_a_signature_agrees_with_none_but_may_be_chosen() -> None:
    """The analyst's judge gives no signature: its passing candidate is chosen all the same; two that
    agree by signature outvote it."""
    stored = Candidate("q1", "direct", ok=True, ref="@1")
    assert choose([stored])[0] is stored
    a = Candidate("q2", "sample 1", ok=True, signature="A")
    a2 = Candidate("q3", "sample 2", ok=True, signature="A")
    assert choose([stored, a, a2])[0] is a
    assert choose([stored, a])[0] is stored  # a tie: the earliest


def test_lessons_are_one_line_each_and_name_where_the_result_stays() -> None:
    failed = Candidate("SELECT x\nFROM t", "direct", blocking=["Binder Error: no x\nLINE 1: SELECT x"])
    empty = Candidate("SELECT y FROM t WHERE z = 1", "repair", ok=True, found_nothing=True, ref="@1",
                      blocking=["@1: no rows."])
    repeat = Candidate("select x from t;", "sample 1", blocking=list(failed.blocking), repeats="direct")
    passed = Candidate("SELECT y FROM t", "sample 2", ok=True)
    lessons = DirectOutcome([failed, empty, repeat, passed]).lessons()
    assert lessons == ["`SELECT x FROM t` → Binder Error: no x LINE 1: SELECT x",
                       "@1 `SELECT y FROM t WHERE z = 1` → @1: no rows."]  # the repeat is the first's line
