"""Attempts and fallback: acceptance (no exception + prediction.csv), restore between attempts,
the fallback run of the last edited solver.py, the deadline, and tasks sharing one event loop."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest

from datasolver.agent import Deadline, Limits, solve_task
from datasolver.agent.solve import SolveOutcome
from tests.helpers.agent import edit_query_turn, fake_client, task_run
from datasolver.llm.fake import ScriptedModel, delay, http_error, text, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import make_tiny_task
from tests.helpers.agent import solve as solve_against

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

solve = functools.partial(solve_against, face=ScriptedModel)  # about the agent: the model at the transport

COUNT_BY_CITY = 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city ORDER BY n DESC, city")'
EXPECTED_CSV = "city,n\nParis,2\nLyon,1\nNice,1\n"
BAD_REQUEST = http_error(400, body={"error": {"message": "invalid request"}})


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_tiny_task(tmp_path / "input"), tmp_path / "scratch")


def published(scratch: Path) -> Path:
    return scratch.parent.parent / "out" / scratch.name / "prediction.csv"


def test_a_model_that_never_runs_or_edits_fails_without_fallback(scratch: Path) -> None:
    outcome, server, events = solve(scratch, [text("The answer is Paris."), text("Paris.")], Limits(max_attempts=2))
    assert (outcome.status, outcome.attempts, outcome.requests, outcome.prediction) == ("failed", 2, 2, None)
    assert outcome.reason == (
        "attempt 2 ended (answered with prose) without prediction.csv; fallback skipped: solver.py was never edited "
        "and no explore query returned rows")
    assert not published(scratch).exists()
    assert [e["ran"] for e in events if e["event"] == "fallback"] == [False]


def test_never_calling_run_solver_is_accepted_when_a_csv_exists(scratch: Path) -> None:
    def handler(body: dict):
        # Something other than run_solver left a prediction behind during the conversation.
        (scratch / "workdir" / "prediction.csv").write_text("city\nParis\n", encoding="utf-8")
        return text("Paris.")

    outcome, _, _ = solve(scratch, handler=handler)
    assert (outcome.status, outcome.attempts) == ("solved", 1)
    assert published(scratch).read_text(encoding="utf-8") == "city\nParis\n"


def test_an_edit_never_run_is_saved_by_the_fallback(scratch: Path) -> None:
    script = [edit_query_turn(scratch, COUNT_BY_CITY), text("I edited solver.py.")]
    outcome, _, events = solve(scratch, script, Limits(max_attempts=1))
    assert (outcome.status, outcome.reason) == (
        "fallback", "attempt 1 ended (answered with prose) without prediction.csv; fallback ran the last edited solver.py")
    assert outcome.prediction == published(scratch)
    assert outcome.prediction.read_text(encoding="utf-8") == EXPECTED_CSV
    [fallback] = [e for e in events if e["event"] == "fallback"]
    assert (fallback["ran"], fallback["status"]) == (True, "OK")


def test_a_failing_fallback_says_why_in_one_line_from_the_run(scratch: Path) -> None:
    """The agent's fallback is the pipeline's (`solver.run_fallback`): its reason names what ran,
    the status and the error's first line, taken from the run (not from its report's text)."""
    script = [edit_query_turn(scratch, 'result = run_sql("SELECT * FROM no_such_table")'), text("done")]
    outcome, _, _ = solve(scratch, script, Limits(max_attempts=1))
    head = ("attempt 1 ended (answered with prose) without prediction.csv; "
            "fallback run of the last edited solver.py: FAILED (")
    assert outcome.status == "failed" and outcome.reason.startswith(head)
    assert "no_such_table" in outcome.reason and "\n" not in outcome.reason


def test_five_failed_attempts_then_fallback(scratch: Path) -> None:
    """Each attempt reads solver.py (pristine again), edits it, stops without running it."""
    seen_pristine: list[bool] = []

    def handler(body: dict):
        messages = body["messages"]
        attempt = sum(1 for m in messages if m["role"] == "assistant")  # turns so far in this attempt
        if attempt == 0:
            return tool_call("read_solver", {})
        if attempt == 1:
            seen_pristine.append("|result = None" in messages[-1]["content"])
            number = len(seen_pristine)
            return edit_query_turn(scratch, f'result = run_sql("SELECT {number} AS attempt")')
        return text("done, I think")

    outcome, server, events = solve(scratch, handler=handler)
    assert seen_pristine == [True] * 5  # the scaffold was restored before every attempt
    assert (outcome.status, outcome.attempts, outcome.requests) == ("fallback", 5, 15)
    assert outcome.reason == "attempt 5 ended (answered with prose) without prediction.csv; fallback ran the last edited solver.py"
    assert published(scratch).read_text(encoding="utf-8") == "attempt\n5\n"  # the last edit ran
    kinds = [e["event"] for e in events]
    assert kinds.count("attempt_start") == 5 and kinds.count("fallback") == 1
    assert kinds.index("fallback") < kinds.index("prediction_published")


def test_fallback_uses_an_earlier_edit_when_the_last_attempt_made_none(scratch: Path) -> None:
    script = [edit_query_turn(scratch, COUNT_BY_CITY), text("done"), BAD_REQUEST]
    outcome, _, _ = solve(scratch, script, Limits(max_attempts=2))
    assert outcome.status == "fallback"
    assert outcome.reason.startswith("attempt 2 ended with LLMBadRequestError: HTTP 400")
    assert [a.ended for a in outcome.attempt_results] == ["answered", "model_error"]
    assert published(scratch).read_text(encoding="utf-8") == EXPECTED_CSV


def test_an_attempt_ending_in_an_exception_is_not_accepted_even_with_a_csv(scratch: Path) -> None:
    script = [edit_query_turn(scratch, COUNT_BY_CITY), tool_call("run_solver", {}), BAD_REQUEST, text("done")]
    outcome, _, events = solve(scratch, script, Limits(max_attempts=2))
    first, second = outcome.attempt_results
    assert first.error is not None and second.ended == "answered"
    attempt_ends = [e for e in events if e["event"] == "attempt_end"]
    assert [e["prediction"] for e in attempt_ends] == [True, False]  # the CSV was there, yet rejected
    assert outcome.status == "fallback"  # the remembered edit of attempt 1 still produced the answer
    assert published(scratch).read_text(encoding="utf-8") == EXPECTED_CSV


def test_the_deadline_cancels_a_slow_request(scratch: Path) -> None:
    # A clock that stands still: reading the task costs no time by it, however busy the machine,
    # so attempt 1 starts; its request would take a minute, so only the deadline (0.5 s of the
    # request's own wait) can have ended the attempt.
    deadline = Deadline(100.5, clock=lambda: 100.0)
    outcome, _, _ = solve(scratch, [delay(60, then=text("late"))], deadline=deadline)
    assert [a.ended for a in outcome.attempt_results] == ["deadline"]
    assert outcome.status == "failed" and outcome.reason.startswith("deadline reached in attempt 1")


def test_a_past_deadline_starts_no_attempt(scratch: Path) -> None:
    outcome, server, _ = solve(scratch, [], deadline=Deadline(99.0, clock=lambda: 100.0))
    assert (outcome.attempts, outcome.requests, len(server.requests)) == (0, 0, 0)
    assert outcome.reason.startswith("deadline passed before attempt 1")


def test_tasks_share_one_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import datasolver.agent.solve as solve_module

    # Briefs are built in turns, at most as many at once as there are CPUs (here: one).
    monkeypatch.setattr(solve_module, "BRIEF_TURNS", threading.BoundedSemaphore(1))
    building, most = [0], [0]
    real_gather = solve_module.gather_brief

    def counting_gather(*args, **kwargs):
        building[0] += 1
        most[0] = max(most[0], building[0])
        try:
            return real_gather(*args, **kwargs)
        finally:
            building[0] -= 1

    monkeypatch.setattr(solve_module, "gather_brief", counting_gather)
    scratches = []
    for name, question in (("task_a", "Count orders per city (alpha)"), ("task_b", "Count orders per city (beta)")):
        task = make_tiny_task(tmp_path / "input", name)
        spec = json.loads((task / "task.json").read_text())
        (task / "task.json").write_text(json.dumps({**spec, "question": question}))
        scratches.append(prepare_task(task, tmp_path / "scratch"))
    turns = lambda s: [edit_query_turn(s, COUNT_BY_CITY), tool_call("run_solver", {}), text("done")]  # noqa: E731
    script = {"(alpha)": turns(scratches[0]), "(beta)": turns(scratches[1])}
    with ScriptedModel(script, latency_s=0.2) as server:
        async def go() -> list[SolveOutcome]:
            async with fake_client(server) as client:
                return await asyncio.gather(*(solve_task(task_run(s, client, tmp_path / "out")) for s in scratches))

        outcomes = asyncio.run(go())
    assert server.errors == []
    assert [o.status for o in outcomes] == ["solved", "solved"]
    assert [o.task_id for o in outcomes] == ["task_a", "task_b"]
    for name in ("task_a", "task_b"):
        assert (tmp_path / "out" / name / "prediction.csv").read_text(encoding="utf-8") == EXPECTED_CSV
    assert most == [1]
