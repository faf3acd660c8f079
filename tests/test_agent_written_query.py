"""A reply with no tool call that wrote an SQL query (an ```sql block, or `run_sql("…")` in a
```python block) is not lost: the query is tested with explore_data, put into solver.py and run,
and the model sees the results as if it had made those calls; the trace records them so a replay
gives the same run. A failing query leaves solver.py alone and shows the error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.agent import solve_at_transport
from datasolver.llm.text_calls import parse_text_tool_calls
from datasolver.llm.fake import garbage, text, tool_call
from datasolver.solver.prepare import prepare_task
from datasolver.solver.scaffold import RESULT_LINE
from tests.helpers.solver import PAPER_SQL, make_paper_task

pytestmark = pytest.mark.fast  # in-process: the scripted model at the transport

ANSWER_CSV = "title\nAdaptive Joins\nMedian Sketches\nZebra Streams\n"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return prepare_task(make_paper_task(tmp_path / "input"), tmp_path / "scratch")


def solve(scratch: Path, script, **settings):
    return solve_at_transport(scratch, script, **settings)


@pytest.mark.parametrize("reply", [
    f"Here is the query:\n```sql\n{PAPER_SQL}\n```",
    f'```python\nresult = run_sql("{PAPER_SQL}")\n```',
])
def test_a_written_query_is_run_and_answers(scratch: Path, reply: str) -> None:
    outcome, server, events = solve(scratch, [text(reply), text("Done.")])
    assert outcome.status == "solved" and outcome.requests == 2
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    # The reply goes back with the calls it stood for, written as text as the model wrote it.
    assistant, results = server.requests[1]["messages"][-2:]
    assert assistant["content"].startswith(reply) and "tool_calls" not in assistant
    assert names_called(assistant["content"]) == ["edit_solver", "run_solver"]
    first, second = results["content"].split("</tool_response>")[:2]
    assert "(Your reply wrote an SQL query" in first and "Query area replaced" in first
    assert second.strip().startswith("<tool_response>\nOK")
    calls = [e for e in events if e["event"] == "tool_call"]
    assert [(c["name"], c["via"]) for c in calls] == [("explore_data", "written"), ("edit_solver", "written"),
                                                      ("run_solver", "written")]
    [adopted] = [e for e in events if e["event"] == "query_adopted"]
    assert adopted["ran"] and adopted["query"] == PAPER_SQL
    assert not [e for e in events if e["event"] == "sent_back"]
    assert outcome.attempt_results[0].adopted == 1


def test_a_failing_written_query_shows_the_error_and_leaves_solver_py_alone(scratch: Path) -> None:
    script = [text("```sql\nSELECT title FROM Result WHERE year = 2020\n```"), text("I cannot."), text("No.")]
    outcome, server, events = solve(scratch, script)
    assert outcome.status == "failed"
    assistant, results = server.requests[1]["messages"][-2:]
    assert names_called(assistant["content"]) == ["explore_data"]
    assert "failed, so solver.py is unchanged" in results["content"] and "Result" in results["content"]
    solver_py = (scratch / "workdir" / "solver.py").read_text(encoding="utf-8")
    assert RESULT_LINE in solver_py.splitlines()
    # The next reply with no call and no query is still sent back once.
    assert [e["event"] for e in events].count("sent_back") == 1


def test_a_final_message_with_sql_after_an_answer_is_not_run_again(scratch: Path) -> None:
    script = [tool_call("edit_solver", {"sql": PAPER_SQL}), tool_call("run_solver", {}),
              text("Done; I used:\n```sql\nSELECT title FROM paper\n```")]
    outcome, server, events = solve(scratch, script)
    assert outcome.status == "solved" and outcome.requests == 3
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    assert not [e for e in events if e["event"] == "query_adopted"]


def test_a_text_mode_server_gets_the_same_calls_as_text(scratch: Path) -> None:
    outcome, server, _ = solve(scratch, [text(f"```sql\n{PAPER_SQL}\n```"), text("Done.")], tool_mode="text")
    assert outcome.status == "solved" and "tools" not in server.requests[1]
    assistant, results = server.requests[1]["messages"][-2:]
    assert names_called(assistant["content"]) == ["edit_solver", "run_solver"]
    assert "<tool_response>\nOK" in results["content"]


def names_called(content: str) -> list[str]:
    return [call.name for call in parse_text_tool_calls(content).calls]


def test_a_reply_cut_off_after_its_closed_sql_block_is_used(scratch: Path) -> None:
    content = f"```sql\n{PAPER_SQL}\n```\nThis query selects the titles of the papers and then"
    body = {"id": "x", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 512}}
    outcome, _, events = solve(scratch, [garbage(json.dumps(body)), text("Done.")])
    assert outcome.status == "solved" and outcome.requests == 2
    assert outcome.prediction.read_text(encoding="utf-8") == ANSWER_CSV
    assert not [e for e in events if e["event"] == "cut_off"]
