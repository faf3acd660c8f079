"""The tests' own layout: test modules hold tests, helpers live in tests/helpers/, and no test module
imports another test module or conftest.py (a helper imported from a test module runs that
module's fixtures and tests into whatever imports it, and pytest may import conftest twice)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build

TESTS = Path(__file__).resolve().parent
HELPERS = TESTS / "helpers"


def _imported_modules(path: Path, root: Path = TESTS.parent) -> list[tuple[str, int]]:
    """(module, line) for every import in `path` at any depth (inside functions too); a
    `from M import n` gives both M and M.n; relative imports are resolved from `root`."""
    found = []
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names] + [(base, node.lineno)]
    return found


def test_modules_import_no_test_module_nor_conftest() -> None:
    offenders = []
    for path in sorted([*TESTS.glob("*.py"), *HELPERS.glob("*.py")]):
        for module, line in _imported_modules(path):
            parts = module.split(".")
            if parts[0] == "tests" and len(parts) > 1 and (parts[1].startswith("test_") or parts[1] == "conftest"):
                offenders.append(f"{path.relative_to(TESTS)}:{line} imports {module}")
    assert offenders == [], "move what is shared into tests/helpers/:\n" + "\n".join(offenders)


def test_the_import_check_sees_relative_and_late_imports(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    module = tmp_path / "tests" / "test_b.py"
    module.write_text("from .test_a import helper\n\ndef test_x():\n    from tests.conftest import SHARED\n",
                      encoding="utf-8")
    found = [m for m, _ in _imported_modules(module, root=tmp_path)]
    assert "tests.test_a" in found and "tests.conftest" in found


def test_the_tests_folder_holds_only_test_modules_and_conftest() -> None:
    """A helper module named like a test (or beside them) is easy to import from a test by mistake."""
    stray = [p.name for p in TESTS.glob("*.py") if not p.name.startswith("test_")
             and p.name not in ("conftest.py", "__init__.py")]
    assert stray == [], f"helpers belong in tests/helpers/: {stray}"
    named_like_tests = [p.name for p in HELPERS.glob("test_*.py")]
    assert named_like_tests == [], f"tests/helpers/ holds no test modules: {named_like_tests}"


def test_helpers_define_no_tests() -> None:
    for path in HELPERS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        tests = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                 and (n.name.startswith("test_") or n.name.startswith("Test"))]
        assert tests == [], f"{path.name} defines tests: {tests}"


# Private names tests may still touch, each with why no public seam is honest. Everything else goes
# through public names: a test that reaches into `_state` breaks on a rename that changes nothing
# a caller sees, and proves less than one that uses what callers use.
PRIVATE_ALLOWED = {
    ("test_data_catalog.py", "_reader"): "proves that listing loaded tables asks DuckDB nothing: no caller "
                                         "can see that, and a query counter only for it would be API for a test",
    ("test_data_interrupt.py", "_entries"): "makes one table's file read block until released (a slow disk), "
                                            "which no input file can do on demand",
    ("test_data_relation.py", "_run"): "counts the statements a lazy Relation sends (none before an output, "
                                       "one per output): laziness has no other visible effect",
    ("test_bench_local_server.py", "_ACCESS"): "a benchmarks/ script's own table, not the package's",
}
# Underscored names that are public API of the standard library.
_STDLIB = {"_exit", "_asdict", "_replace", "_fields", "_make", "_getframe"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in _STDLIB


def private_uses(path: Path) -> list[tuple[str, int]]:
    """(name, line) for each private name `path` reaches: `x._name` (not on self/cls), `from M import
    _name`, and `setattr(x, "_name")` or `setattr("pkg.mod._name")` (monkeypatch's too; getattr, hasattr, delattr)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.attr, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            found += [(alias.name, node.lineno) for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            func = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if func in ("setattr", "delattr", "getattr", "hasattr"):
                for arg in node.args[:2]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        last = arg.value.rsplit(".", 1)[-1]
                        if _private(last):
                            found.append((last, node.lineno))
    return found


def test_tests_use_public_names_only() -> None:
    offenders, used = [], set()
    for path in sorted([*TESTS.glob("*.py"), *HELPERS.glob("*.py")]):
        for name, line in private_uses(path):
            if (path.name, name) in PRIVATE_ALLOWED:
                used.add((path.name, name))
            else:
                offenders.append(f"{path.name}:{line} touches {name}")
    assert offenders == [], "test through a public name (or give the code a small public seam):\n" + "\n".join(offenders)
    assert used == set(PRIVATE_ALLOWED), f"allowed but no longer used: {set(PRIVATE_ALLOWED) - used}"


def test_the_private_name_check_sees_each_way_in(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    module = tmp_path / "tests" / "test_x.py"
    module.write_text(
        "from datasolver.video.keyframes import _events\n"
        "def test_x(monkeypatch, box):\n"
        "    assert box._catalog is None\n"
        "    monkeypatch.setattr(box, '_run', None)\n"
        "    monkeypatch.setattr('datasolver.llm.client._sleep', None)\n"
        "    os._exit(0); self._own = 1\n", encoding="utf-8")
    assert sorted(name for name, _ in private_uses(module)) == ["_catalog", "_events", "_run", "_sleep"]


# The fast tier (`-m fast`, README): what a module marked `fast` may not use, as code (imports,
# names, markers), never as words in a string: a server, a process of its own, a batch run or a
# test marked slow belongs outside the tier.
NOT_FAST_MODULES = ("subprocess", "multiprocessing")
NOT_FAST_NAMES = ("ScriptedServer", "run_batch", "run_batch_sync", "Popen")
# tests/helpers/agent.py and pipeline.py offer the server as a choice (`face=ScriptedServer`); a
# fast module that took it would name ScriptedServer itself.
SERVER_AS_A_CHOICE = ("uses ScriptedServer", "imports datasolver.llm.fake.ScriptedServer")


def _not_fast(path: Path, root: Path = TESTS.parent) -> list[str]:
    """What in `path` (a test module or a helper) starts a server, a process or a batch, or marks a
    test slow."""
    found = [f"imports {m}" for m, _ in _imported_modules(path, root)
             if m.split(".")[0] in NOT_FAST_MODULES or m.rsplit(".", 1)[-1] in NOT_FAST_NAMES]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name) and node.id in NOT_FAST_NAMES:
            found.append(f"uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in NOT_FAST_NAMES:
            found.append(f"uses .{node.attr}")
        elif (isinstance(node, ast.Attribute) and node.attr == "slow" and isinstance(node.value, ast.Attribute)
              and node.value.attr == "mark"):
            found.append("marks a test slow")
    return sorted(set(found))


def _marked_fast(path: Path) -> bool:
    """Whether the module's `pytestmark` holds `pytest.mark.fast`."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return "pytest.mark.fast" in ast.unparse(node.value)
    return False


def test_a_module_marked_fast_starts_no_server_process_or_batch_and_holds_no_slow_test() -> None:
    """`-m fast` stays the in-process tier: its modules, and the helpers they import, use no
    ScriptedServer (the scripted model answers at the client's transport), no subprocess and no
    batch run, and mark no test slow."""
    fast = [p for p in sorted(TESTS.glob("test_*.py")) if _marked_fast(p)]
    assert len(fast) > 50, "the fast tier lost its modules"
    offenders = []
    for path in fast:
        helpers = sorted({HELPERS / f"{m.split('.')[2]}.py" for m, _ in _imported_modules(path)
                          if m.startswith("tests.helpers.") and (HELPERS / f"{m.split('.')[2]}.py").is_file()})
        offenders += [f"{path.name}: {what}" for what in _not_fast(path)]
        offenders += [f"{path.name} through {helper.name}: {what}" for helper in helpers
                      for what in _not_fast(helper) if what not in SERVER_AS_A_CHOICE]
    assert offenders == [], "a module marked fast must stay in-process:\n" + "\n".join(offenders)


def test_the_fast_check_sees_a_server_a_process_and_a_slow_mark(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    module = tmp_path / "tests" / "test_x.py"
    module.write_text(
        "import subprocess\nimport pytest\nfrom datasolver.llm.fake import ScriptedServer\n\n"
        "@pytest.mark.slow\ndef test_x():\n    'ScriptedServer and subprocess in words are fine'\n"
        "    with ScriptedServer() as server:\n        subprocess.run(['true'])\n", encoding="utf-8")
    assert _not_fast(module, tmp_path) == ["imports datasolver.llm.fake.ScriptedServer", "imports subprocess",
                                 "marks a test slow", "uses ScriptedServer"]
    module.write_text('"""Not a ScriptedServer, no subprocess, never pytest.mark.slow."""\n', encoding="utf-8")
    assert _not_fast(module, tmp_path) == []
