"""The confidence label's rule (eval/confidence.py), as a table: repair rounds, checks, fallback,
agreement of candidates."""

from __future__ import annotations

import pytest

from datasolver.eval.confidence import AnswerEvidence, confidence


@pytest.mark.parametrize("rounds, checks_pass, fallback, agreeing, label", [
    (0, True, False, 1, "medium"),   # the first query, its checks pass: right about half the time (calibration)
    (1, True, False, 1, "medium"),   # one repair
    (2, True, False, 1, "low"),      # repeated repairs
    (5, True, False, 1, "low"),
    (0, True, False, 2, "high"),     # two candidates agree on the first query's answer: high
    (1, True, False, 2, "high"),     # agreement raises one step
    (2, True, False, 3, "medium"),   # agreement after REPAIRS_LOW rounds: never high
    (0, True, False, 3, "high"),     # never past high
    (0, False, False, 3, "low"),     # failed checks: low, agreement or not
    (0, True, True, 3, "low"),       # the fallback: low
])
def test_the_label_of_an_answer(rounds: int, checks_pass: bool, fallback: bool, agreeing: int, label: str) -> None:
    assert confidence(AnswerEvidence(rounds, checks_pass, fallback, agreeing)) == label


# -- the label on a solve's outcome and in its trace -------------------------------------------------

from pathlib import Path  # noqa: E402

from datasolver.agent import Limits  # noqa: E402
from datasolver.llm.fake import ScriptedModel, text, tool_call  # noqa: E402
from datasolver.solver.prepare import prepare_task  # noqa: E402
from tests.helpers.agent import edit_query_turn  # noqa: E402
from tests.helpers.agent import solve as run_solve  # noqa: E402
from tests.helpers.solver import make_tiny_task  # noqa: E402

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

CITIES = 'result = run_sql("SELECT DISTINCT city FROM orders ORDER BY city")'


def test_every_published_answer_has_its_label_in_the_outcome_and_the_trace(tmp_path: Path) -> None:
    scratch = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    script = [edit_query_turn(scratch, CITIES), tool_call("run_solver", {}), text("Done.")]
    outcome, _, events = run_solve(scratch, script, Limits(max_attempts=1), face=ScriptedModel)
    [event] = [e for e in events if e["event"] == "confidence"]
    # A loop answer (no direct path) in its first attempt: one round, its checks pass.
    assert (outcome.status, outcome.confidence, event["label"], event["repair_rounds"]) == ("solved", "medium",
                                                                                           "medium", 1)
    [end] = [e for e in events if e["event"] == "solve_end"]
    assert end["confidence"] == "medium"


def test_a_fallback_answer_is_low_and_no_answer_has_no_label(tmp_path: Path) -> None:
    scratch = prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")
    script = [tool_call("explore_data", {"query": "SELECT DISTINCT city FROM orders"}), text("Paris.")]
    outcome, _, _ = run_solve(scratch, script, Limits(max_attempts=1), face=ScriptedModel)
    assert (outcome.status, outcome.confidence) == ("fallback", "low")
    other = prepare_task(make_tiny_task(tmp_path / "input2"), tmp_path / "scratch2")
    outcome, _, _ = run_solve(other, [text("No idea.")], Limits(max_attempts=1), face=ScriptedModel)
    assert (outcome.status, outcome.confidence) == ("failed", None)


# -- the direct path: a first query alone is medium; two agreeing candidates make it high -------------

from tests.helpers.agent import solve_scripted  # noqa: E402
from tests.helpers.solver import PAPER_SQL, make_paper_task  # noqa: E402

EMPTY_SQL = "SELECT title FROM paper WHERE year = 2030"  # no such year: an empty result


def _direct(tmp_path: Path, script: list) -> tuple[str | None, dict]:
    scratch = prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")
    outcome, _, events = solve_scripted(scratch, script, limits=Limits(max_attempts=1, send_backs=0,
                                                                       direct_answer=True, direct_samples=3))
    assert outcome.status == "solved"
    [event] = [e for e in events if e["event"] == "confidence"]
    return outcome.confidence, event


def test_a_first_query_whose_checks_pass_is_medium(tmp_path: Path) -> None:
    label, event = _direct(tmp_path, [text(f"```sql\n{PAPER_SQL}\n```")])
    assert (label, event["label"], event["repair_rounds"], event["agreeing"]) == ("medium", "medium", 0, 1)


def test_two_agreeing_candidates_make_the_answer_high(tmp_path: Path) -> None:
    # The direct query finds nothing, the repair turn writes no query; two samples (different queries) agree.
    script = [text(f"```sql\n{EMPTY_SQL}\n```"), text("I would look at the data first."),
              text(f"```sql\n{PAPER_SQL}\n```"), text("```sql\nSELECT title FROM paper WHERE year = 2020\n```")]
    label, event = _direct(tmp_path, script)
    assert (label, event["label"], event["repair_rounds"], event["agreeing"]) == ("high", "high", 1, 2)
