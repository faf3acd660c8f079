"""`datasolver run` checks its model endpoint before the first task, and its exit status says
whether the run answered anything.

An unreachable endpoint, a refused key or an unknown model is one `Error: …` line naming the URL
and what to set, exit 1, and nothing started: no trace, no summary, no output or logs folder, no
scratch. Every task failed: exit 3; some answered, or all skipped: exit 0.
"""

from __future__ import annotations

import json
import re
import socket
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver import examples
from datasolver.cli import cli
from datasolver.examples import solver_handler
from datasolver.llm.fake import ScriptedServer, text
from tests.helpers.pipeline import copy_examples


@pytest.fixture
def private_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary folders (the batch's scratch) go here, so a test can see what is left."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    input_dir = tmp_path / "input" if (tmp_path / "input").is_dir() else copy_examples(tmp_path)
    return CliRunner().invoke(cli, ["run", str(input_dir), str(tmp_path / "out"), "--logs", str(tmp_path / "logs"),
                                    "--no-doc-llm", *args], env=env)


def nothing_started(tmp_path: Path, temp: Path) -> None:
    assert not (tmp_path / "out").exists() and not (tmp_path / "logs").exists()
    assert list(temp.iterdir()) == []


def test_an_unreachable_endpoint_is_one_error_before_any_task(tmp_path, private_temp):
    port = closed_port()
    # DATASOLVER_PREFLIGHT_WAIT through the environment (as the container sets it), so the code
    # before the preflight ran this test too: it then spent every task's retries and exited 0.
    result = run(tmp_path, "--api-url", f"http://127.0.0.1:{port}/v1", "--model", "m",
                 env={"DATASOLVER_PREFLIGHT_WAIT": "0.3"})
    assert result.exit_code == 1, result.output
    *before, error = result.output.splitlines()
    tries = re.search(r" \(\d+ tr(?:y|ies) in \d+s\)\. ", error)  # the machine's speed decides both
    assert tries is not None, result.output
    assert error.replace(tries.group(), " (…). ") == (
        f"Error: cannot reach the model server at http://127.0.0.1:{port}/v1: All connection attempts failed (…). "
        "Is it running, and is MODEL_API_URL (--api-url) its OpenAI-compatible base URL, usually ending in /v1? "
        "--preflight-wait sets how long to wait for a server that is starting.")
    # When a first try ends within the wait, one line on stderr says that it waits; nothing else.
    waiting = (f"the model server at http://127.0.0.1:{port}/v1 does not answer yet (All connection attempts "
               "failed); waiting up to 0.3s for it")
    assert [line.partition(" ")[2] for line in before] in ([], [waiting]), result.output
    nothing_started(tmp_path, private_temp)


def test_a_refused_key_is_one_error_before_any_task(tmp_path, private_temp):
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), api_key="sk-right-key-123") as server:
        result = run(tmp_path, "--api-url", server.base_url, "--model", "fake-model",
                     env={"MODEL_API_KEY": "sk-wrong-key-456"})
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"Error: the model server at {server.base_url} refused the key it was sent: Unauthorized. Set "
            "MODEL_API_KEY or MODEL_API_KEY_FILE (--api-key-file) to a key it accepts.\n")
        assert server.requests == [] and [r.path for r in server.records] == ["/v1/models"]
    nothing_started(tmp_path, private_temp)


def test_an_unknown_model_is_one_error_naming_the_servers_models(tmp_path, private_temp):
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), models=["qwen-a", "qwen-b"]) as server:
        result = run(tmp_path, "--api-url", server.base_url, "--model", "qwen-c")
        assert result.exit_code == 1, result.output
        assert result.output == (
            f"Error: the model server at {server.base_url} has no model 'qwen-c': The model `qwen-c` does not "
            "exist.. It lists: qwen-a, qwen-b. Set MODEL_NAME (--model) to one of them.\n")
        assert server.requests == [] and server.preflights == 1
    nothing_started(tmp_path, private_temp)


def test_a_run_that_answers_records_its_preflight(tmp_path):
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), models=["fake-model"]) as server:
        url = server.base_url
        result = run(tmp_path, "--api-url", url, "--model", "fake-model", "--workers", "3")
        assert result.exit_code == 0, result.output
        gets = [r.path for r in server.records if r.method == "GET"]
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text(encoding="utf-8"))
    assert summary["preflight"] == {**summary["preflight"], "url": url, "tries": 1,
                                    "models": ["fake-model"], "answered": True, "note": None}
    # The window questions are the preflight's, asked once for the whole run (not once per task).
    assert gets == ["/v1/models", "/props"]


def test_the_solvers_rules_are_sent_once_before_the_first_task(tmp_path):
    # The warm-up: the agent's system prompt and tool schemas, one token back, tools off, so a
    # server's prompt cache holds them before any task's clock starts; the summary records it.
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), models=["fake-model"]) as server:
        result = run(tmp_path, "--api-url", server.base_url, "--model", "fake-model", "--tasks", "task_demo_sales")
        assert result.exit_code == 0, result.output
        chats = [r.body for r in server.records if r.method == "POST" and r.body.get("max_tokens") != 1
                 or r.method == "POST" and r.body.get("tool_choice") == "none"]
        assert server.preflights == 1
    first, task_opening = chats[0], chats[1]
    assert task_opening is server.requests[0] or task_opening == server.requests[0]  # the warm-up is no scripted turn
    assert (first["max_tokens"], first["tool_choice"]) == (1, "none")
    assert first["messages"][0] == task_opening["messages"][0]  # the same rules, byte for byte
    assert first["tools"] == task_opening["tools"]
    assert "task_demo_sales" not in json.dumps(first)  # no task's data in it
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text(encoding="utf-8"))
    warm = summary["preflight"]["warm_up"]
    assert warm["error"] is None and warm["prompt_tokens"] > 100, warm


def test_a_slow_first_reply_does_not_stop_the_run(tmp_path, monkeypatch):
    # A server busy with someone's long prompt (llama.cpp on 2 CPUs takes minutes) is no error.
    import datasolver.llm.preflight as preflight

    monkeypatch.setattr(preflight, "PREFLIGHT_REPLY_S", 0.2)
    with ScriptedServer(handler=solver_handler(examples.demo_answers()), latency_s=0.5) as server:
        url = server.base_url
        result = run(tmp_path, "--api-url", url, "--model", "fake-model", "--tasks", "task_demo_sales")
        assert result.exit_code == 0, result.output
    assert "solved 1, fallback 0, failed 0, skipped 0" in result.stdout
    assert (f"the model server at {url} has not answered a one-token request within 0.2s (busy, or "
            "loading its model?); the tasks start anyway, each request with its own timeouts") in result.stderr


# -- the exit status says whether anything was answered ------------------------------------------

def test_every_task_failed_exits_3(tmp_path):
    with ScriptedServer(handler=lambda request: text("I cannot help.")) as server:
        result = run(tmp_path, "--api-url", server.base_url, "--model", "fake-model", "--max-attempts", "1")
    assert result.exit_code == 3, result.output
    assert "solved 0, fallback 0, failed 3, skipped 0" in result.stdout
    assert result.stderr.endswith("every task this run ran failed (exit 3); the reasons are in the summary\n")


def test_some_task_answered_exits_0(tmp_path):
    answers = {k: v for k, v in examples.demo_answers().items() if k == "task_demo_sales"}
    with ScriptedServer(handler=solver_handler(answers)) as server:
        result = run(tmp_path, "--api-url", server.base_url, "--model", "fake-model", "--max-attempts", "1")
    assert result.exit_code == 0, result.output
    assert "solved 1, fallback 0, failed 2, skipped 0" in result.stdout
    assert "every task this run ran failed" not in result.output


def test_the_exit_codes_are_in_the_help():
    out = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert "Exit status: 0 when the run ran and some task answered (or every task was skipped); 1 for a" in out
    assert "3 when every task the run ran failed" in out
