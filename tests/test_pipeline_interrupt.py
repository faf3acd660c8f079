"""Ctrl-C or SIGTERM during a batch ends every sandboxed run at once, even one running in a thread.

A sandboxed solver.py run waits in a worker thread (asyncio.to_thread). Interrupting the batch must
not leave the process waiting for that run's own timeout, nor leave the run behind as an orphan.
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

from datasolver.llm.fake import ScriptedServer
from tests.helpers.processes import all_gone, holders


pytestmark = [pytest.mark.skipif(sys.platform != "linux", reason="the sandbox is Linux-only"), pytest.mark.slow]

SCRIPT = textwrap.dedent(
    """
    import asyncio, signal, sys
    from pathlib import Path
    from datasolver.cli import cli

    # Ctrl-C as Python takes it by default, even when the suite runs with SIGINT ignored (a shell
    # starts a background job that way, and children inherit it).
    signal.signal(signal.SIGINT, signal.default_int_handler)

    # A batch whose one task's solve runs a sandboxed program that sleeps far past the test's patience.
    token, marker = sys.argv[1], Path(sys.argv[2])

    async def sleeper(run):
        from datasolver.sandbox import SandboxLimits, run_sandboxed
        work = run.layout.workdir
        # It holds `beat` open until it dies (a warm run's command line is the fork server's, so the
        # token alone cannot tell whether it still runs).
        code = (f"beat = open({str(work / 'beat')!r}, 'a'); open({str(work / 'started')!r}, 'w').write('x')\\n"
                f"import time\\nwhile True:\\n    time.sleep(0.05)  # {token}")
        await asyncio.to_thread(run_sandboxed, [sys.executable, "-c", code], cwd=work, write_dirs=[work],
                                log_dir=run.layout.tmp, limits=SandboxLimits(timeout_s=300))
        raise AssertionError("the sandboxed run should have been stopped")

    # `run` with this solver in place of the agent's (the setup's solver; solve_task by default).
    import functools
    import datasolver.cli.run_cmds as run_cmds
    run_cmds.run_batch_sync = functools.partial(run_cmds.run_batch_sync, solver=sleeper)
    cli(sys.argv[3:])
    """
)


def _alive_with(token: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_batch_ends_a_sandboxed_run_in_a_thread(tmp_path, signum):
    from tests.helpers.pipeline import add_task

    input_dir = tmp_path / "input"
    add_task(input_dir, "task_sleep", "How many?", "n\n1\n")
    token = f"datasolver-interrupt-{os.getpid()}-{signum}"
    with ScriptedServer() as server:  # answers the check of the endpoint before the first task
        argv = ["run", str(input_dir), str(tmp_path / "out"), "--api-url", server.base_url,
                "--model", "m", "--task-timeout", "600", "--scratch", str(tmp_path / "scratch")]
        env = {**os.environ, "MODEL_API_KEY": "sk-unused"}
        proc = subprocess.Popen([sys.executable, "-c", SCRIPT, token, str(tmp_path), *argv], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        started: list[Path] = []
        deadline = time.monotonic() + 120
        while not started and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
            started = list((tmp_path / "scratch").glob("**/workdir/started"))
        assert started, f"the sandboxed run never started: {proc.communicate(timeout=30)[0].decode()[-2000:]}"
        assert holders(started[0].with_name("beat")), "the run does not hold its file: the check below would be blind"
        proc.send_signal(signum)
        try:
            out, _ = proc.communicate(timeout=30)  # the run's own timeout is 300 s
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            pytest.fail(f"the batch was still waiting for its sandboxed run 30 s after the signal:\n{out.decode()[-2000:]}")
        assert proc.returncode != 0
        assert _alive_with(token) == [], "the sandboxed run outlived the batch"
        assert all_gone(started[0].with_name("beat")), "the sandboxed run outlived the batch (it holds its file)"
