"""`pip install .` (no extras) is enough for the data commands and the demo.

A fresh `pip install .` in every test run would download and build; instead each command runs in a
subprocess where every module that only the `video`, `ray` and `dev` extras bring cannot be
imported, as in a lean install. Which modules those are is worked out from the installed packages'
metadata (the extras' dependency closure minus the core's), so the list follows pyproject.toml.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

from datasolver import examples

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ("video", "ray", "dev")
LEAN_RUNNER = """
import atexit, importlib.abc, json, sys
blocked = set(json.loads(sys.argv[1]))

class Lean(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r} (not in a lean install)", name=name)
        return None

sys.meta_path.insert(0, Lean())
atexit.register(lambda: print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr))
from datasolver.cli import main
sys.argv = ["datasolver", *sys.argv[2:]]
main()
"""


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _closure(requirements: list) -> set[str]:
    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = list(requirements)
    while todo:
        req = todo.pop()
        if _name(req.name) in seen:
            continue
        seen.add(_name(req.name))
        try:
            found = metadata.requires(req.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in found:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in (*req.extras, "")):
                todo.append(sub)
    return seen


@cache
def extras_only_modules() -> tuple[str, ...]:
    """Top-level modules of the distributions only the extras bring (not datasolver's core closure)."""
    requirement = pytest.importorskip("packaging.requirements").Requirement
    core = _closure([requirement("datasolver")])
    everything = _closure([requirement(f"datasolver[{','.join(EXTRAS)}]")])
    extra = everything - core
    owners = metadata.packages_distributions()
    return tuple(sorted(m for m, dists in owners.items()
                        if any(_name(d) in extra for d in dists) and not any(_name(d) in core for d in dists)))


def lean(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run([sys.executable, "-c", LEAN_RUNNER, json.dumps(extras_only_modules()), *args],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("MODULES "):
            modules = set(json.loads(line.removeprefix("MODULES ")))
    return done, modules


def test_the_extras_are_really_left_out():
    blocked = extras_only_modules()
    assert {"av", "rapidocr", "onnxruntime", "faster_whisper", "ray", "pytest"} <= set(blocked)
    assert not {"duckdb", "pandas", "openai", "click", "PIL", "numpy"} & set(blocked)  # the core brings these


@pytest.mark.parametrize(("command", "shown"), [
    (["sql", "TASK", "SELECT region, COUNT(*) AS n FROM orders GROUP BY region ORDER BY region"], "North"),
    (["tables", "TASK"], "orders"),
])
def test_the_data_commands_need_no_extra_and_load_no_model_or_video_code(command, shown):
    task = str(examples.input_dir() / "task_demo_sales")
    done, modules = lean(*[task if a == "TASK" else a for a in command])
    assert done.returncode == 0, done.stderr[-2000:]
    assert shown in done.stdout
    heavy = sorted(m for m in modules if m.split(".")[0] in ("openai", "av", "ray")
                   or m.startswith(("datasolver.video", "datasolver.pipeline", "datasolver.agent", "datasolver.llm.client")))
    assert heavy == []


@pytest.mark.slow
def test_the_demo_runs_without_the_extras(tmp_path):
    # Its own video cache, so the video example's pass cannot be served from an earlier full run.
    done, _ = lean("demo", "--output", str(tmp_path / "out"), env={"DATASOLVER_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "mean score 1.00 against the gold answers bundled with the examples" in done.stdout
    trace = (tmp_path / "out-logs" / "task_demo_video" / "trace.jsonl").read_text(encoding="utf-8")
    assert '"event": "video_failed"' in trace and "No module named 'av'" in trace  # a note; the task goes on


def test_the_readme_shows_the_lean_install_beside_the_full_one():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert '.venv/bin/pip install -e ".[dev]"' in readme and ".venv/bin/python -m pytest -q" in readme  # the two commands
    lean_block = re.search(r"```bash\n(# lean.*?)```", readme, re.DOTALL)
    assert lean_block is not None, "no lean install block in the README"
    assert "pip install ." in lean_block.group(1) and "datasolver sql" in lean_block.group(1)
