"""SIGTERM unwinds the CLI like Ctrl-C: `datasolver run` removes its temporary scratch folder.

Before: Python's default SIGTERM ended the process at once and the folder stayed behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datasolver.llm.fake import ScriptedServer
from tests.helpers.pipeline import copy_examples


@pytest.mark.slow
def test_sigterm_during_run_removes_the_temporary_scratch(tmp_path: Path) -> None:
    input_dir = copy_examples(tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    with ScriptedServer(latency_s=120) as server:  # every model request hangs: the run is mid-task
        env = dict(os.environ, TMPDIR=str(temp))
        process = subprocess.Popen(
            [sys.executable, "-m", "datasolver", "run", str(input_dir), str(tmp_path / "out"),
             "--api-url", server.base_url, "--model", "fake-model", "--logs", str(tmp_path / "logs"),
             "--no-doc-llm", "--workers", "1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while not server.records:  # the first model request means the scratch folder exists
                assert process.poll() is None, process.stderr.read().decode(errors="replace")[-2000:]
                assert time.monotonic() < deadline, "no model request within 120 s"
                time.sleep(0.05)
            assert any(p.name.startswith("datasolver-scratch-") for p in temp.iterdir())
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 128 + signal.SIGTERM
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert [p.name for p in temp.iterdir() if p.name.startswith("datasolver-")] == []
