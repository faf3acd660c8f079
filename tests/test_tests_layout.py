"""The tests' own layout: test modules hold tests, helpers live in tests/helpers/, and no test module
imports another test module or conftest.py (a helper imported from a test module runs that
module's fixtures and tests into whatever imports it, and pytest may import conftest twice)."""

from __future__ import annotations

import ast
from pathlib import Path

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
