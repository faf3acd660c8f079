"""`datasolver replay`: a scripted-model run recorded, then replayed with no model reachable."""

from __future__ import annotations

import importlib
import json
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.examples.scripted import load_answers
from datasolver.llm.fake import SCRIPTED_BASE_URL
from datasolver.llm.replay import ReplayCursor, exchanges_from_events
from datasolver.pipeline.replay import last_run
from datasolver.pipeline.replay_compare import first_divergence, make_normalizer
from tests.helpers.askcli import cli_model

EXAMPLES = Path(__file__).resolve().parents[1] / "src" / "datasolver" / "examples"
DEV_REPLAY_TASKS = 3
pytestmark = pytest.mark.xdist_group("replay")  # one worker records the module's run, once


def record_run(input_dir: Path, answers: dict[str, ScriptedAnswer], out: Path, logs: Path,
               tasks: list[str] | None = None, *, direct: bool = False) -> None:
    """A recorded run; without `direct` the tool loop alone (its turns are what these tests replay)."""
    args = ["run", str(input_dir), str(out), "--model", "scripted", "--workers", "3", "--logs", str(logs),
            "--no-doc-llm", "--direct-answer" if direct else "--no-direct-answer"]
    if tasks:
        args += ["--tasks", ",".join(tasks)]
    with cli_model(handler=solver_handler(answers)) as server:
        result = CliRunner().invoke(cli, args + ["--api-url", SCRIPTED_BASE_URL])
        assert result.exit_code == 0, result.output
        assert server.errors == []


def refuse_sockets(monkeypatch) -> None:
    """Nothing may connect anywhere, not even to this machine: the replay must need no model."""
    def refuse(self, address):
        raise OSError(f"replay tried to connect to {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


@pytest.fixture
def no_sockets(monkeypatch):
    refuse_sockets(monkeypatch)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The bundled examples run once with the scripted model: (input, recorded output, logs)."""
    root = tmp_path_factory.mktemp("recorded")
    input_dir = EXAMPLES / "input"
    # The video example is left out: its video pass would slow the fixture and it has tests of its own.
    record_run(input_dir, load_answers(EXAMPLES / "solutions.json", input_dir), root / "out", root / "logs",
               tasks=["task_demo_library", "task_demo_sales", "task_demo_weather"])
    return input_dir, root / "out", root / "logs"


def replay(logs: Path, input_dir: Path, out: Path, *extra: str):
    return CliRunner().invoke(cli, ["replay", str(logs), str(input_dir), str(out), "--workers", "3", *extra])


@pytest.mark.slow
def test_a_replay_with_no_model_reproduces_every_prediction(recorded, tmp_path, no_sockets):
    input_dir, _, logs = recorded
    result = replay(logs, input_dir, tmp_path / "again", "--gold", str(EXAMPLES / "output"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "again" / "replay_summary.json").read_text(encoding="utf-8"))
    assert summary["counts"] == {"identical": 3, "diverged": 0, "recording incomplete": 0}
    recorded_summary = json.loads((logs / "run_summary.json").read_text(encoding="utf-8"))
    assert recorded_summary["counts"]["solved"] == 3
    for task in summary["tasks"]:
        assert task["outcome"] == "identical"
        assert task["old_signature"] == task["new_signature"]
        assert task["new_signature"].startswith("2c")  # two columns scored, not "missing"
        assert task["replayed_exchanges"] == task["recorded_exchanges"] == 6
        assert (task["old_score"], task["new_score"], task["score_change"]) == (1.0, 1.0, "same")
    assert "task_demo_sales  identical  prediction" in result.output
    # The replay's own traces hold the same tool results as the recording.
    new_trace = tmp_path / "again-replay-logs" / "task_demo_sales" / "trace.jsonl"
    assert sum('"event": "tool_result"' in line for line in new_trace.read_text().splitlines()) == 5


def test_a_direct_answer_run_replays_with_its_own_switches(tmp_path, monkeypatch):
    # The run's switches that decide its requests (the direct answer, held answers) are in its
    # summary, and the replay sends the same requests: one direct answer per task, identical.
    input_dir = EXAMPLES / "input"
    recording = tmp_path / "recorded"
    record_run(input_dir, load_answers(EXAMPLES / "solutions.json", input_dir), recording / "out",
               recording / "logs", tasks=["task_demo_sales"], direct=True)
    refuse_sockets(monkeypatch)  # the replay needs no model
    kept = json.loads((recording / "logs" / "run_summary.json").read_text(encoding="utf-8"))["settings"]
    assert (kept["direct_answer"], kept["hold_flagged"]) == (True, True)
    result = replay(recording / "logs", input_dir, tmp_path / "again")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "again" / "replay_summary.json").read_text(encoding="utf-8"))
    [task] = summary["tasks"]
    assert task["outcome"] == "identical" and task["replayed_exchanges"] == task["recorded_exchanges"] == 1


@pytest.mark.slow
def test_a_broken_tool_shows_as_diverged_at_the_request_that_carries_its_result(
        recorded, tmp_path, monkeypatch, no_sockets):
    input_dir, _, logs = recorded
    module = importlib.import_module("datasolver.solver.tools.explore_data")

    real = module.render_result
    monkeypatch.setattr(module, "render_result", lambda result: real(result).replace("\n", "\n|", 1))
    result = replay(logs, input_dir, tmp_path / "broken", "--tasks", "task_demo_sales")
    assert result.exit_code == 0, result.output
    task = json.loads((tmp_path / "broken" / "replay_summary.json").read_text())["tasks"][0]
    # Request 1 asks for \tables (a command, not rendered SQL); request 2's answer runs SQL, whose
    # result request 3 carries.
    assert task["outcome"] == "diverged"
    assert task["verdict"] == "diverged at request 3: the result of explore_data differs"
    assert task["divergence"]["tool"] == "explore_data"
    assert "+|product_id" in task["divergence"]["diff"] and "-product_id" in task["divergence"]["diff"]
    assert "diverged at request 3" in result.output


@pytest.mark.slow
def test_a_killed_run_is_a_recording_incomplete(recorded, tmp_path, no_sockets):
    input_dir, _, logs = recorded
    cut = tmp_path / "cut-logs"
    shutil.copytree(logs, cut)
    trace = cut / "task_demo_weather" / "trace.jsonl"
    lines = trace.read_text(encoding="utf-8").splitlines()
    last_response = max(i for i, line in enumerate(lines) if '"event": "response"' in line)
    trace.write_text("\n".join(lines[:last_response]) + "\n" + lines[last_response][:40], encoding="utf-8")
    result = replay(cut, input_dir, tmp_path / "after-kill", "--tasks", "task_demo_weather")
    assert result.exit_code == 0, result.output
    task = json.loads((tmp_path / "after-kill" / "replay_summary.json").read_text())["tasks"][0]
    assert task["outcome"] == "recording incomplete"
    assert task["recorded_exchanges"] == 5 and task["missing_exchanges"] >= 1
    assert any("damaged line" in n for n in task["notes"])
    assert any("never finished" in n for n in task["notes"])


@pytest.mark.slow
def test_unknown_task_ids_are_refused_before_any_work(recorded, tmp_path):
    input_dir, _, logs = recorded
    result = replay(logs, input_dir, tmp_path / "x", "--tasks", "task_nope")
    assert result.exit_code == 1
    assert "no recorded trace for task_nope" in result.output
    assert not (tmp_path / "x").exists()


def test_recorded_failures_are_replayed_as_failures():
    events = [
        {"event": "retry", "request_id": 1, "attempt": 1, "status": 503, "error": "HTTP 503 from u: busy"},
        {"event": "retry", "request_id": 1, "attempt": 2, "status": None, "error_type": "LLMTimeoutError",
         "error": "slow"},
        {"event": "response", "request_id": 1, "attempt": 3, "content": "hi", "reasoning": "r",
         "tool_calls": [], "finish_reason": "stop", "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
        {"event": "error", "request_id": 2, "attempt": 1, "error_type": "CancelledError", "error": "x"},
    ]
    exchanges = exchanges_from_events(events)
    assert [(e.status, e.failure, e.message) for e in exchanges] == [
        (503, None, "busy"), (200, "timeout", "slow"), (200, None, "")]
    body = exchanges[2].body
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "hi", "reasoning_content": "r"}
    assert body["usage"]["total_tokens"] == 4
    cursor = ReplayCursor(exchanges)
    assert [cursor.next() is not None for _ in range(4)] == [True, True, True, False]
    assert (cursor.served, cursor.missing) == (3, 1)


def test_divergence_names_a_changed_system_prompt_and_masks_scratch_paths():
    def request(rid, messages, base=0, start=0):
        return {"event": "request", "request_id": rid, "attempt": 1, "messages": messages,
                "messages_base": base, "messages_from": start}

    retry = {"event": "request", "request_id": 1, "attempt": 2, "messages_total": 2}

    old = [request(1, [{"role": "system", "content": "rules v1"},
                       {"role": "user", "content": "data in /tmp/datasolver-scratch-abc1/t1"}])]
    same = [request(1, [{"role": "system", "content": "rules v1"},
                        {"role": "user", "content": "data in /tmp/datasolver-scratch-zz9/t1"}])]
    changed = [request(1, [{"role": "system", "content": "rules v2"}, old[0]["messages"][1]]), retry]
    normalize = make_normalizer([])
    assert first_divergence(old, same, normalize) is None
    found = first_divergence(old, changed, normalize)
    assert found is not None and found.request == 1 and found.what == "the system prompt differs"
    assert found.diff == "-rules v1\n+rules v2"
    assert last_run([{"event": "task_start", "n": 1}, {"event": "x"}, {"event": "task_start", "n": 2}]) == [
        {"event": "task_start", "n": 2}]


@pytest.mark.slow
def test_a_recorded_dev_run_replays_to_identical_predictions(dev_tasks, tmp_path, monkeypatch):
    from tests.helpers.pipeline import oracle_answers

    answers = oracle_answers(dev_tasks)
    chosen = sorted(answers)[:DEV_REPLAY_TASKS]
    record_run(dev_tasks / "input", answers, tmp_path / "out", tmp_path / "logs", chosen)
    refuse_sockets(monkeypatch)
    result = replay(tmp_path / "logs", dev_tasks / "input", tmp_path / "again", "--gold", str(dev_tasks / "output"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "again" / "replay_summary.json").read_text())
    assert summary["counts"]["identical"] == len(chosen), result.output
    assert all(t["old_signature"] == t["new_signature"] and t["new_score"] == 1.0 for t in summary["tasks"])
