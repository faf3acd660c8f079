"""`datasolver run --votes N`: independent solves, stop at the first agreement by the metric's
answer signature, else majority; ties to fewer failed checks, then the earliest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers.agent import query_line
from datasolver.cli import cli
from datasolver.llm.fake import SCRIPTED_BASE_URL, text, tool_call
from datasolver.pipeline.votes import SolveRecord, VotePolicy, choose
from datasolver.solver.hashline import line_hash
from datasolver.solver.scaffold import RESULT_LINE, render_solver
from tests.helpers.askcli import cli_model
from tests.helpers.solver import make_tiny_task

RIGHT = 'result = run_sql("SELECT city, count(*) AS n FROM orders GROUP BY city")'
RIGHT_REORDERED = 'result = run_sql("SELECT count(*) AS orders, city FROM orders GROUP BY city ORDER BY city")'
WRONG = 'result = run_sql("SELECT city FROM orders")'


def solve_turns(code: str, number: int):
    return [tool_call("edit_solver", {"start_line": number, "start_hash": line_hash(RESULT_LINE), "new_content": code}),
            tool_call("run_solver", {}), text("Done."), text("Done, it is right.")]  # the 2nd after a send-back


def run_votes(tmp_path: Path, codes: list[str], votes: int):
    """Run the tiny task with --votes; the n-th conversation plays codes[n]. Returns (summary, server)."""
    inputs = tmp_path / "input"
    make_tiny_task(inputs)
    question = json.loads((inputs / "task_tiny" / "task.json").read_text(encoding="utf-8"))["question"]
    scaffold = render_solver("task_tiny", question, []).splitlines()
    conversations: list[list] = []

    def handler(body: dict):
        if len(body["messages"]) == 2:  # system + task prompt: a new solve starts
            number = next(i for i, line in enumerate(scaffold, 1) if line == RESULT_LINE)
            conversations.append(solve_turns(codes[len(conversations)], number))
        return conversations[-1].pop(0)

    out, logs = tmp_path / "out", tmp_path / "logs"
    with cli_model(handler=handler) as server:
        result = CliRunner().invoke(cli, ["run", str(inputs), str(out), "--api-url", SCRIPTED_BASE_URL, "--model", "m",
                                          "--logs", str(logs), "--votes", str(votes), "--vote-temperature", "0.5",
                                          "--no-direct-answer"])  # each solve's turns are the tool loop's
        assert result.exit_code == 0, result.output
        assert server.errors == []
    summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    [record] = summary["tasks"]
    return record, server, out / "task_tiny" / "prediction.csv", logs


def test_right_wrong_right_picks_the_right_answer(tmp_path: Path) -> None:
    record, server, prediction, logs = run_votes(tmp_path, [RIGHT, WRONG, RIGHT_REORDERED], votes=3)
    vote = record["vote"]
    assert [s["status"] for s in vote["solves"]] == ["solved"] * 3
    first, second, third = (s["signature"] for s in vote["solves"])
    assert first == third != second  # header and row order do not matter
    assert (vote["chosen"], vote["how"]) == (1, "agreement")
    assert vote["votes"] == {first: 2, second: 1}
    assert record["status"] == "solved" and record["attempts"] == 3
    assert prediction.read_text(encoding="utf-8").splitlines()[0] == "city,n"  # solve 1's file
    temperatures = [body.get("temperature") for body in server.requests if len(body["messages"]) == 2]
    assert temperatures == [0.0, 0.5, 0.5]
    events = [json.loads(line)["event"] for line in (logs / "task_tiny" / "trace.jsonl").read_text().splitlines()]
    assert events.count("vote_solve_start") == 3 and events.count("vote_result") == 1


def test_two_agreeing_solves_stop_the_vote(tmp_path: Path) -> None:
    record, server, prediction, _ = run_votes(tmp_path, [RIGHT, RIGHT_REORDERED, WRONG], votes=3)
    assert [s["number"] for s in record["vote"]["solves"]] == [1, 2]
    assert len(server.requests) == 6  # two solves of three requests each (no check failed; the warm-up is not one)
    assert record["vote"]["how"] == "agreement"


def record(number: int, signature: str | None, checks: int = 0) -> SolveRecord:
    return SolveRecord(number, 0.0, "solved", 3, 1.0, None, signature, checks)


@pytest.mark.parametrize(("solves", "expected"), [
    ([record(1, "a")], (0, "single")),
    ([record(1, None), record(2, None)], (None, "none")),
    ([record(1, "a"), record(2, "b"), record(3, "b")], (1, "majority")),
    ([record(1, "a", 2), record(2, "b", 0), record(3, None)], (1, "tie: fewer failed checks")),
    ([record(1, "a", 1), record(2, "b", 1), record(3, "c", 1)], (0, "tie: earliest")),
    ([record(1, None), record(2, "b", 3)], (1, "majority")),
])
def test_choose(solves, expected) -> None:
    assert choose(solves) == expected


def test_vote_policy_validates() -> None:
    with pytest.raises(ValueError):
        VotePolicy(0)
    assert VotePolicy(3, 0.7).temperature_of(1) == 0.0 and VotePolicy(3, 0.7).temperature_of(2) == 0.7
