"""`datasolver ask` and `ask-golden` through CliRunner, against the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datasolver.cli.ask_cmds import COMMANDS
from datasolver.cli.model_options import NO_MODEL
from datasolver.llm.fake import text, tool_call
from tests.helpers.askcli import invoke, scripted_model_env
from tests.helpers.datafiles import write_task

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "sales.csv").write_text("region,amount\nNorth,10\nSouth,9\n", encoding="utf-8")
    return folder


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch):
    """Point the environment at a scripted server; yield a function that loads its script."""
    yield from scripted_model_env(monkeypatch)


def test_ask_prints_the_answer_alone(data: Path, model) -> None:
    model([tool_call("query", {"sql": "SELECT region FROM sales ORDER BY amount DESC LIMIT 1"}),
           tool_call("final_answer", {"answer": "{DATA}"})])
    result = invoke("ask", "--no-direct-answer", str(data), "Which region sold most?")
    # stdout is the answer alone; the confidence line goes beside it, on stderr
    assert (result.exit_code, result.stdout, result.stderr) == (0, "North\n", "confidence: medium (one repair)\n")


def test_ask_json_prints_the_record(data: Path, model) -> None:
    model([tool_call("query", {"sql": "SELECT sum(amount) AS total FROM sales"}),
           tool_call("final_answer", {"answer": "19 t", "evidence": ["@1"]})])
    result = invoke("ask", "--no-direct-answer", str(data), "Total sales?", "--json")
    record = json.loads(result.output)
    assert (result.exit_code, record["ok"], record["answer"]) == (0, True, "19 t")
    assert record["evidence_sql"] == ["SELECT sum(amount) AS total FROM sales"]
    assert record["handles"][0]["ref"] == "@1" and record["usage"]["requests"] == 2


def test_ask_json_says_when_no_query_backed_the_answer(data: Path, model) -> None:
    server = model([text("North sold the most, I think."), text("North sold the most, I think.")])
    record = json.loads(invoke("ask", "--no-direct-answer", str(data), "Which region sold most?", "--json").output)
    # Sent back once ("query first"); answered again without a query, it is given marked, never as if backed.
    assert server.requests[1]["messages"][-1]["content"].startswith("No stored result backs your answer")
    assert (record["ok"], record["answer"], record["stopped"]) == (
        True, "[unbacked: no query result holds this answer] North sold the most, I think.", "text")
    assert record["backed_by_query"] is False and record["evidence_sql"] == []
    assert record["unbacked"].startswith("no query backed this answer")
    assert [(c["check"], c["action"]) for c in record["checks"]] == [("no_result", "sent_back"),
                                                                     ("no_result", "unbacked")]
    model([tool_call("query", {"sql": "SELECT region FROM sales ORDER BY amount DESC LIMIT 1"}),
           tool_call("final_answer", {"answer": "North", "evidence": ["@1"]})])
    backed = json.loads(invoke("ask", "--no-direct-answer", str(data), "Which region sold most?", "--json").output)
    assert backed["backed_by_query"] is True and not any("no query" in n for n in backed["notes"])


def test_plain_ask_warns_on_stderr_when_no_query_backed_the_answer(data: Path, model) -> None:
    model([text("North sold the most, I think.")] * 2)
    result = invoke("ask", "--no-direct-answer", str(data), "Which region sold most?")
    assert (result.exit_code, result.stdout) == (
        0, "[unbacked: no query result holds this answer] North sold the most, I think.\n")
    assert result.stderr.startswith("note: no query backed this answer")
    assert result.stderr.endswith("\nconfidence: low (failed checks)\n")
    model([tool_call("query", {"sql": "SELECT region FROM sales ORDER BY amount DESC LIMIT 1"}),
           tool_call("final_answer", {"answer": "{DATA}"})])
    backed = invoke("ask", "--no-direct-answer", str(data), "Which region sold most?")
    assert (backed.stdout, backed.stderr) == ("North\n", "confidence: medium (one repair)\n")


def test_ask_without_question_asks_the_task_question(tmp_path: Path, model) -> None:
    task = write_task(tmp_path, question="How many rows?", files={"csv/t.csv": "a\n1\n2\n"})
    server = model([tool_call("query", {"sql": "SELECT count(*) AS n FROM t"}), text("2")])
    result = invoke("ask", "--no-direct-answer", str(task))
    assert (result.exit_code, result.stdout, result.stderr) == (0, "2\n", "confidence: medium (one repair)\n")
    assert server.requests[0]["messages"][1]["content"].endswith("Question\nHow many rows?")


def test_empty_question_is_an_error_before_any_request(data: Path, model) -> None:
    server = model([])
    result = invoke("ask", str(data), "  ??? ")
    assert result.exit_code == 1
    assert result.output == ('Error: the question is empty (or only punctuation and invisible characters); give the '
                             'question as text, e.g. "How many orders were shipped in 2023?"\n')
    result = invoke("ask", str(data), "", "--json")
    assert result.exit_code == 1
    assert json.loads(result.output)["error"] == "EmptyQuestion" and json.loads(result.output)["ok"] is False
    assert server.requests == []


def test_missing_model_configuration_is_reported(data: Path) -> None:
    result = invoke("ask", str(data), "Total?")
    assert (result.exit_code, result.output) == (1, f"Error: {NO_MODEL}\n")


def test_ask_golden_scores_every_item(data: Path, model, tmp_path: Path) -> None:
    questions = tmp_path / "golden.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"id": "q1", "question": "Which region sold most?", "answer": "North"},
        {"id": "q2", "question": "Total sales?", "answer": "19 t"},
    ]), encoding="utf-8")
    model([tool_call("query", {"sql": "SELECT region FROM sales ORDER BY amount DESC LIMIT 1"}), text("North"),
           tool_call("query", {"sql": "SELECT sum(amount) AS total FROM sales"}), text("19")])
    out = tmp_path / "golden.json"
    result = invoke("ask-golden", "--no-direct-answer", str(questions), "--data", str(data), "--json", str(out))
    lines = result.output.splitlines()
    assert result.exit_code == 0
    assert lines[:2] == ["q1\t1.000\tNorth", "q2\t0.500\t19"]
    assert lines[2].startswith("Mean 0.7500 over 2 questions (review off; 4 requests, ")
    assert json.loads(out.read_text(encoding="utf-8"))["mean"] == 0.75


def test_every_ask_command_has_help_and_docs() -> None:
    docs = (DOCS / "ask.md").read_text(encoding="utf-8") + (DOCS / "mcp.md").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert command.help and command.help.strip()
        assert f"datasolver {command.name}" in docs
        for param in command.params:
            if param.param_type_name == "option":
                assert param.help, f"{command.name} {param.opts} has no help"
                assert param.opts[0] in docs, f"{command.name} {param.opts[0]} is not documented"


def test_missing_model_with_json_gives_the_json_error_shape(data: Path) -> None:
    result = invoke("ask", str(data), "Total?", "--json")
    record = json.loads(result.output)
    assert result.exit_code == 1 and record["ok"] is False and record["error"] == "LLMConfigError"
    assert record["message"] == NO_MODEL


def test_ask_against_a_dead_endpoint_says_so_at_once_and_exits_1(data: Path, tmp_path: Path) -> None:
    """Issue 45: `ask` said "Cannot reach …" only after 15-19 s of silent retries. Now, as `run`
    does, a line at once, a short wait for an interactive command (1 s, --preflight-wait for more),
    then `Error:` naming the URL and exit 1. A real process on a loopback port nothing listens on."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:  # a free port, closed again: connections to it are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "DATASOLVER_PREFLIGHT"))}
    env |= {"MODEL_API_URL": f"http://127.0.0.1:{port}/v1", "MODEL_NAME": "m", "MODEL_API_KEY": "k",
            "DATASOLVER_TABLE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "datasolver", "ask", str(data), "Which region sold most?"],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0].startswith(f"note: the model server at http://127.0.0.1:{port}/v1 does not answer yet")
    assert lines[0].endswith("waiting up to 1s for it")
    assert lines[-1].startswith(f"Error: cannot reach the model server at http://127.0.0.1:{port}/v1")
    assert "--preflight-wait" in lines[-1]


def _sql(query: str):
    return text(f"```sql\n{query}\n```")


TOTAL = "SELECT sum(amount) AS total FROM sales"


@pytest.mark.parametrize("args, script, label, reason", [
    # the direct query's answer, first time: medium (high needs candidates that agree; ask draws none)
    ((), [_sql(TOTAL)], "medium", "first query"),
    # the direct query failed; one repair turn answered
    ((), [_sql("SELECT sum(amont) AS total FROM sales"), _sql(TOTAL)], "medium", "one repair"),
    # two repair turns
    ((), [_sql("SELECT sum(amont) AS total FROM sales"), _sql("SELECT sum(amuont) AS total FROM sales"),
          _sql(TOTAL)], "low", "2 repairs"),
    # the direct path wrote no query; the tool loop answered
    ((), [text("I would look at the sales."), tool_call("query", {"sql": TOTAL}),
          tool_call("final_answer", {"answer": "19", "evidence": ["@1"]})], "low", "2 repairs"),
    # the tool loop alone (no direct path): one round, as the Solver's loop answer in its first attempt
    (("--no-direct-answer",), [tool_call("query", {"sql": TOTAL}),
                               tool_call("final_answer", {"answer": "19", "evidence": ["@1"]})], "medium", "one repair"),
    # an answer no stored result backs, after the send-back: its checks failed
    (("--no-direct-answer",), [text("About 20.")] * 2, "low", "failed checks"),
    # the model gave no answer; the program wrote the latest result into it
    (("--no-direct-answer",), [tool_call("query", {"sql": TOTAL}), text("{}"), text("{}")], "low", "fallback"),
])
def test_ask_json_carries_the_confidence_of_its_answer(data: Path, model, args: tuple[str, ...], script: list,
                                                       label: str, reason: str) -> None:
    model(script)
    record = json.loads(invoke("ask", *args, str(data), "Total sales?", "--json").output)
    assert (record["confidence"], record["confidence_reason"]) == (label, reason)


def test_plain_ask_says_its_confidence_on_one_line_of_stderr(data: Path, model) -> None:
    model([_sql("SELECT sum(amont) AS total FROM sales"), _sql(TOTAL)])
    result = invoke("ask", str(data), "Total sales?")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "total: 19\n", "confidence: medium (one repair)\n")
