"""SIGTERM unwinds the CLI like Ctrl-C: `datasolver run` removes its temporary scratch folder.

Before: Python's default SIGTERM ended the process at once and the folder stayed behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from datasolver.llm.fake import ScriptedServer, delay
from tests.helpers.pipeline import copy_examples


@pytest.mark.slow
def test_sigterm_during_run_removes_the_temporary_scratch(tmp_path: Path) -> None:
    input_dir = copy_examples(tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    # Every model request of a task hangs (the preflight before the first task is answered): the run is mid-task.
    with ScriptedServer(handler=lambda request: delay(120, "late")) as server:
        env = dict(os.environ, TMPDIR=str(temp))
        process = subprocess.Popen(
            [sys.executable, "-m", "datasolver", "run", str(input_dir), str(tmp_path / "out"),
             "--api-url", server.base_url, "--model", "fake-model", "--logs", str(tmp_path / "logs"),
             "--no-doc-llm", "--workers", "1"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while not server.requests:  # a task's first model request means the scratch folder exists
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


# Stands for the next task being prepared in a worker thread while the batch is interrupted: the
# thread still makes folders in the scratch after the batch's own removal has run.
_INTERRUPTED_WHILE_PREPARING = textwrap.dedent("""
    import sys, threading, time
    from pathlib import Path
    from datasolver.llm import LLMSettings
    from datasolver.llm.fake import ScriptedServer
    from datasolver.pipeline import RunConfig, run_batch_sync

    class PreparingAhead:
        name = "preparing-ahead"

        async def run(self, todo, batch):
            def keep_writing():
                end = time.monotonic() + 0.5
                while time.monotonic() < end:
                    (batch.scratch_root / "task_next" / "workdir").mkdir(parents=True, exist_ok=True)
                    time.sleep(0.01)
            threading.Thread(target=keep_writing).start()
            time.sleep(0.05)
            raise KeyboardInterrupt

    out = Path(sys.argv[2])
    with ScriptedServer() as server:  # answers the check of the endpoint before the first task
        config = RunConfig(input_dir=Path(sys.argv[1]), output_dir=out / "out", logs_dir=out / "logs", doc_llm=False,
                           settings=LLMSettings(base_url=server.base_url, api_key=None, model="m"), workers=1)
        run_batch_sync(config, executor=PreparingAhead())
""")


def test_an_interrupted_batch_leaves_no_scratch_even_while_a_thread_still_writes_there(tmp_path: Path) -> None:
    input_dir = copy_examples(tmp_path)
    temp = tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run([sys.executable, "-c", _INTERRUPTED_WHILE_PREPARING, str(input_dir), str(tmp_path)],
                          env=dict(os.environ, TMPDIR=str(temp)), capture_output=True, text=True, timeout=120)
    assert "KeyboardInterrupt" in done.stderr, done.stderr[-2000:]  # it was interrupted, as meant
    assert [p.name for p in temp.iterdir() if p.name.startswith("datasolver-")] == []
