"""Secrets stay out of reach: the key is not left in /proc/<pid>/cmdline, it can come from a file,
and credentials inside the endpoint URL never reach traces, error messages or run summaries.

Before: `--api-key` stayed readable in the parent's command line (solver.py could read
/proc/<ppid>/cmdline), there was no key file, and `MODEL_API_URL=http://user:password@…` was
written into the trace and the summary whenever the endpoint failed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.llm import LLMSettings, TraceWriter, redact_url
from datasolver.llm.client import chat_sync
from datasolver.llm.errors import LLMConnectionError
from datasolver.llm.fake import ScriptedServer, text
from datasolver.pipeline.summary import RunSummary, TaskRecord, write_summary

KEY = "sk-test-0123456789abcdef"
PASSWORD = "hunter2-very-secret"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "sales.csv").write_text("region,amount\nNorth,10\n", encoding="utf-8")
    return folder


@pytest.mark.slow
def test_api_key_flag_is_masked_in_the_process_command_line(data: Path) -> None:
    with ScriptedServer(latency_s=120) as server:  # the request hangs, so the process stays alive
        process = subprocess.Popen(
            [sys.executable, "-m", "datasolver", "ask", str(data), "How much in the North?",
             "--api-url", server.base_url, "--model", "fake-model", "--api-key", KEY],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while not server.records:  # the model request proves the CLI has parsed its flags
                assert process.poll() is None, process.stderr.read().decode(errors="replace")[-2000:]
                assert time.monotonic() < deadline
                time.sleep(0.05)
            cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes()
            assert KEY.encode() not in cmdline
            assert b"--api-key\x00" + b"*" * len(KEY) in cmdline
            assert _authorization(server.records[0]) == f"Bearer {KEY}"  # still used
        finally:
            process.kill()
            process.wait()
    assert "--api-key on the command line can be read by other processes" in process.stderr.read().decode()


def _authorization(record) -> str | None:
    return {k.lower(): v for k, v in record.headers.items()}.get("authorization")


def test_api_key_file_flag_and_env(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    # Three replies a question: the direct request (no query in it: the loop starts), then an answer no
    # query backs is sent back once before it is given (marked). Before them each question checks the
    # endpoint (its model list and a one-token request, answered by the server itself): the key goes there too.
    with ScriptedServer([text("Ten.")] * 6) as server:
        args = ["ask", str(data), "How much in the North?", "--api-url", server.base_url, "--model", "fake-model"]
        result = CliRunner().invoke(cli, [*args, "--api-key-file", str(key_file)])
        assert result.exit_code == 0, result.output
        monkeypatch.setenv("MODEL_API_KEY_FILE", str(key_file))
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        sent = [_authorization(r) for r in server.records]
        assert len(server.requests) == 6 and server.preflights == 2
        assert len(sent) > 6 and set(sent) == {f"Bearer {KEY}"}
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    result = CliRunner().invoke(cli, [*args, "--api-key-file", str(empty)])
    assert result.exit_code == 1 and "is empty" in result.output


def test_url_credentials_never_reach_the_trace_or_errors(tmp_path: Path) -> None:
    url = f"http://reader:{PASSWORD}@127.0.0.1:9/v1"  # port 9 (discard): connection refused
    settings = LLMSettings(base_url=url, api_key=None, model="m", max_retries=0)
    assert settings.display_url == "http://***@127.0.0.1:9/v1"
    trace = TraceWriter(tmp_path / "trace.jsonl")
    with pytest.raises(LLMConnectionError) as caught:
        chat_sync(settings, [{"role": "user", "content": "hi"}], trace=trace)
    assert PASSWORD not in str(caught.value) and "***@127.0.0.1" in str(caught.value)
    written = (tmp_path / "trace.jsonl").read_text(encoding="utf-8")
    assert written and PASSWORD not in written and "reader:" not in written
    # Any URL with credentials that reaches the trace some other way is scrubbed too.
    trace.event("note", detail=f"see https://alice:{PASSWORD}@example.org/x")
    assert PASSWORD not in (tmp_path / "trace.jsonl").read_text(encoding="utf-8")


def test_summary_scrubs_url_credentials(tmp_path: Path) -> None:
    summary = RunSummary(input_dir="in", output_dir="out", logs_dir="logs", model="m", workers=1,
                         task_timeout_s=60.0, time_budget_s=None)
    record = TaskRecord(task_id="t1", status="failed", error=f"Cannot reach http://reader:{PASSWORD}@host/v1: refused")
    summary.add(record)
    written = write_summary(summary, tmp_path / "run_summary.json").read_text(encoding="utf-8")
    assert PASSWORD not in written and "http://***@host/v1" in written
    assert redact_url("no credentials http://host/v1") == "no credentials http://host/v1"
