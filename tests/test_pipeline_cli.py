"""`datasolver run` and `datasolver demo` through CliRunner: exact errors, env defaults, output."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.cli.model_options import NO_MODEL
from datasolver.cli.run_cmds import Duration
from datasolver.pipeline import config as run_config
from datasolver.pipeline import default_logs_dir
from datasolver.llm.fake import SCRIPTED_BASE_URL
from tests.helpers.pipeline import copy_examples, examples_cli_model, snapshot


@pytest.fixture
def example_server():
    with examples_cli_model() as model:
        yield model


def test_run_without_a_model_fails_at_once_with_a_clear_message(tmp_path):
    input_dir = copy_examples(tmp_path)
    result = CliRunner().invoke(cli, ["run", str(input_dir), str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output == (
        "Error: No model configured: set MODEL_API_URL and MODEL_NAME (and MODEL_API_KEY if the endpoint "
        "needs one), or pass --api-url and --model. To see datasolver work without a model, run "
        "`datasolver demo`.\n"
    )
    assert result.output == f"Error: {NO_MODEL}\n"
    assert not (tmp_path / "out").exists()


def test_run_with_flags_solves_the_tasks_and_prints_the_summary(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    out, logs = tmp_path / "out", tmp_path / "logs"
    result = CliRunner().invoke(cli, [
        "run", str(input_dir), str(out), "--api-url", SCRIPTED_BASE_URL, "--model", "fake-model",
        "--workers", "2", "--logs", str(logs), "--no-doc-llm",
    ])
    assert result.exit_code == 0, result.output
    assert "solved 3, fallback 0, failed 0, skipped 0 in " in result.stdout
    latest = json.loads((logs / "run_summary.json").read_text())
    own = logs / f"run_summary-{latest['run_id']}.json"
    assert f"predictions: {out}  summary: {own}\n" in result.stdout
    # Not a terminal: plain progress lines on stderr, no control characters.
    assert "run: 3 task(s) to solve" in result.stderr and "[3/3] " in result.stderr
    assert "\x1b[" not in result.stderr
    assert latest["counts"]["solved"] == 3 and json.loads(own.read_text()) == latest
    # the end-of-run line counts the answers per confidence label, as the summary's task records hold them
    labels = [t["confidence"] for t in latest["tasks"]]
    assert None not in labels and latest["confidence"] == {k: labels.count(k) for k in ("high", "medium", "low")}
    assert (f"; confidence high {labels.count('high')}, medium {labels.count('medium')}, "
            f"low {labels.count('low')}\n") in result.stdout


def test_run_with_no_arguments_reads_the_environment(example_server, tmp_path, monkeypatch):
    input_dir = copy_examples(tmp_path)
    before = snapshot(input_dir)
    monkeypatch.setenv("INPUT_DIR", str(input_dir))
    monkeypatch.setenv("OUTPUT_DIR", str(tmp_path / "out"))
    monkeypatch.setenv("LOGS_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("MODEL_API_URL", SCRIPTED_BASE_URL)
    monkeypatch.setenv("MODEL_NAME", "fake-model")
    monkeypatch.setenv("DATASOLVER_WORKERS", "3")
    result = CliRunner().invoke(cli, ["run"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "task_demo_library", "task_demo_sales", "task_demo_weather"]
    assert (tmp_path / "logs" / "task_demo_sales" / "trace.jsonl").is_file()
    assert snapshot(input_dir) == before
    # Run again: everything is skipped, and that is no failure.
    again = CliRunner().invoke(cli, ["run"])
    assert again.exit_code == 0, again.output
    assert "solved 0, fallback 0, failed 0, skipped 3 in " in again.stdout


def test_run_with_unknown_task_ids(example_server, tmp_path):
    input_dir = copy_examples(tmp_path)
    result = CliRunner().invoke(cli, [
        "run", str(input_dir), str(tmp_path / "out"), "--api-url", SCRIPTED_BASE_URL,
        "--model", "m", "--tasks", "task_nope,task_demo_sales"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: no task named task_nope in the input folder; tasks: task_demo_library, task_demo_sales, "
        "task_demo_weather\n"
    )


def test_run_refuses_an_output_inside_the_input(tmp_path):
    input_dir = copy_examples(tmp_path)
    result = CliRunner().invoke(cli, [
        "run", str(input_dir), str(input_dir / "out"), "--api-url", "http://127.0.0.1:9/v1", "--model", "m",
        "--logs", str(tmp_path / "logs")])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {input_dir / 'out'} is inside the input folder {input_dir}")


def test_a_missing_input_folder_is_an_error(tmp_path):
    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "nope"), str(tmp_path / "out"), "--api-url", "http://127.0.0.1:9/v1",
        "--model", "m"])
    assert result.exit_code == 1
    assert result.output == (
        f"Error: input folder {tmp_path / 'nope'} does not exist; give the folder that holds the task_* folders\n"
    )


@pytest.mark.parametrize(("text", "seconds"), [("900", 900.0), ("90s", 90.0), ("15m", 900.0), ("11.5h", 41400.0)])
def test_durations(text, seconds):
    assert Duration().convert(text, None, None) == seconds


def test_a_bad_duration_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["run", str(tmp_path), str(tmp_path / "o"), "--time-budget", "soon"])
    assert result.exit_code == 2
    assert "'soon' is not a duration: use seconds (900) or a unit (15m, 11.5h)" in result.output


def test_demo_runs_the_examples_and_says_the_answers_are_scripted(tmp_path):
    result = CliRunner().invoke(cli, ["demo", "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "The model is a SCRIPT" in out and "not from a language model" in out
    for task_id in ("task_demo_library", "task_demo_sales", "task_demo_weather"):
        assert f"  {task_id:<22} solved     6 scripted requests   score 1.00" in out
    assert "mean score 1.00 against the gold answers bundled with the examples" in out
    assert "export MODEL_API_URL=https://your-endpoint/v1 MODEL_NAME=your-model MODEL_API_KEY=..." in out
    assert (tmp_path / "out-logs" / "run_summary.json").is_file()


def test_logs_default_to_env_then_container_then_beside_the_output(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGS_DIR", str(tmp_path / "mine"))
    assert default_logs_dir(tmp_path / "out") == tmp_path / "mine"
    monkeypatch.delenv("LOGS_DIR")
    container_logs = tmp_path / "logs"
    monkeypatch.setattr(run_config, "CONTAINER_LOGS", container_logs)
    assert default_logs_dir(tmp_path / "out") == tmp_path / "out-logs"  # no /logs here
    container_logs.mkdir()
    assert default_logs_dir(tmp_path / "out") == container_logs


def test_input_and_output_default_to_the_container_folders(monkeypatch):
    monkeypatch.delenv("INPUT_DIR", raising=False)
    monkeypatch.delenv("OUTPUT_DIR", raising=False)
    assert str(run_config.default_input_dir()) == "/input"
    assert str(run_config.default_output_dir()) == "/output"


@pytest.mark.parametrize("command", ["run", "demo"])
def test_commands_have_help(command):
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and len(result.output) > 200


@pytest.mark.parametrize("flags, expected", [
    ([], {}),  # every flag left out: the agent's own defaults
    (["--max-attempts", "2", "--prompt-budget", "900", "--attempt-temperature-step", "0",
      "--task-token-budget", "5000", "--tool-reply-tokens", "64", "--no-direct-answer"],
     {"max_attempts": 2, "prompt_budget": 900, "attempt_temperature_step": 0.0, "task_token_budget": 5000,
      "tool_reply_tokens": 64, "direct_answer": False, "hold_flagged": False, "stall_rounds": 0}),
    (["--tool-reply-tokens", "0"], {"tool_reply_tokens": None}),  # 0: no cap
    (["--schema-format", "mschema"], {"schema_format": "mschema"}),
])
def test_the_run_flags_become_the_agents_limits(tmp_path, monkeypatch, flags, expected):
    import dataclasses

    from datasolver.agent import Limits
    from datasolver.cli import run_cmds

    seen = []

    def stop(config, **_):
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr(run_cmds, "run_batch_sync", stop)
    (tmp_path / "in").mkdir()
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "in"), str(tmp_path / "out"), "--api-url",
                                      "http://127.0.0.1:9/v1", "--model", "m", *flags])
    assert result.exit_code == 0, result.output
    (config,) = seen
    # `datasolver run` turns the direct answer (and holding a flagged answer, and ending an attempt that
    # stopped improving after two rounds) on unless told not to.
    want = dataclasses.replace(Limits(direct_answer=True, hold_flagged=True, stall_rounds=2), **expected)
    assert config.limits == want


def test_the_schema_format_flag_is_in_the_help_and_reaches_the_first_request(tmp_path):
    help_text = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output
    assert "--schema-format [profile|create_table|mschema]" in help_text
    input_dir = copy_examples(tmp_path)
    with examples_cli_model() as model:
        result = CliRunner().invoke(cli, [
            "run", str(input_dir), str(tmp_path / "out"), "--api-url", SCRIPTED_BASE_URL, "--model", "fake-model",
            "--logs", str(tmp_path / "logs"), "--no-doc-llm", "--tasks", "task_demo_sales",
            "--schema-format", "create_table"])
        first = model.requests[0]["messages"]
    assert result.exit_code == 0, result.output
    user = first[1]["content"]
    assert 'CREATE TABLE "' in user and "-- e.g. " in user
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    assert summary["settings"]["schema_format"] == "create_table"  # a replay writes the tables the same way
