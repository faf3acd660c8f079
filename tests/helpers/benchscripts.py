"""Load a script of benchmarks/ as a module, for tests of its bookkeeping."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers.paths import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """benchmarks/<name>.py as module ``name`` (its sibling imports, e.g. serving.py, resolve)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module
