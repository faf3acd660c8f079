"""A reply is capped (Limits.tool_reply_tokens) while a tool call is expected: for a model that
does not think, until something is submitted; a reply cut by the cap lifts it for the attempt."""

from __future__ import annotations

from pathlib import Path

import pytest

from datasolver.agent import Limits
from tests.helpers.agent import solve_at_transport
from datasolver.llm.fake import text, tool_call
from datasolver.solver.prepare import prepare_task
from tests.helpers.solver import PAPER_SQL, make_paper_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

USUAL = 4096  # the client's own max_tokens in these tests
PLAN = "First I will look at the tables. " * 80  # a prose plan of ~660 tokens (len/4)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, limits: Limits = Limits(max_attempts=1)):
    outcome, server, events = solve_at_transport(scratch, script, limits=limits, max_tokens=USUAL,
                                             server_options={"honor_max_tokens": True})
    return outcome, [r["max_tokens"] for r in server.requests], events


def test_capped_while_a_call_is_expected_then_the_usual_room_once_submitted(scratch: Path) -> None:
    script = [tool_call("run_solver", {}), tool_call("edit_solver", {"sql": PAPER_SQL}),
              tool_call("run_solver", {}), text("Done.")]
    outcome, max_tokens, _ = solve(scratch, script)
    assert outcome.status == "solved"
    # First reply: unknown whether the model thinks; then capped; after prediction.csv exists, the usual.
    assert max_tokens == [USUAL, 512, 512, USUAL]


def test_a_thinking_model_is_never_capped(scratch: Path) -> None:
    script = [tool_call("run_solver", {}, reasoning="Let me run it first."),
              tool_call("edit_solver", {"sql": PAPER_SQL}), tool_call("run_solver", {}), text("Done.")]
    outcome, max_tokens, _ = solve(scratch, script)
    assert outcome.status == "solved" and max_tokens == [USUAL] * 4


def test_a_long_plan_is_cut_at_the_cap_sent_back_once_and_the_rest_has_the_usual_room(scratch: Path) -> None:
    script = [tool_call("run_solver", {}), text(PLAN), tool_call("edit_solver", {"sql": PAPER_SQL}),
              tool_call("run_solver", {}), text("Done.")]
    outcome, max_tokens, events = solve(scratch, script)
    assert outcome.status == "solved" and outcome.requests == 5
    assert max_tokens == [USUAL, 512, USUAL, USUAL, USUAL]
    # The cut reply is answered like any reply without a call: one send-back, no extra cut-off nudge.
    [sent_back] = [e for e in events if e["event"] == "sent_back"]
    assert not [e for e in events if e["event"] == "cut_off"]
    [response] = [e for e in events if e["event"] == "response" and e.get("request_id") == sent_back["request_id"]]
    assert response["usage"]["completion_tokens"] <= 512 + 20 and response["finish_reason"] == "length"


def test_no_cap_when_switched_off(scratch: Path) -> None:
    script = [tool_call("run_solver", {}), tool_call("edit_solver", {"sql": PAPER_SQL}),
              tool_call("run_solver", {}), text("Done.")]
    _, max_tokens, _ = solve(scratch, script, limits=Limits(max_attempts=1, tool_reply_tokens=None))
    assert max_tokens == [USUAL] * 4
