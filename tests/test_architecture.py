"""The map is checked: every import between rooms is one that docs/architecture.md allows."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import datasolver

PACKAGE = Path(datasolver.__file__).parent
DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def _room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def allowed_imports() -> dict[str, set[str]]:
    """Room → rooms it may import, from the table of docs/architecture.md."""
    table: dict[str, set[str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[0] != "`room`":
            room = cells[0].strip("`").rstrip("/").removesuffix(".py")
            table[room] = {r.rstrip("/").removesuffix(".py") for r in re.findall(r"`([^`]+)`", cells[3])}
    return table


def actual_imports() -> dict[str, dict[str, list[str]]]:
    """Room → {imported room: [file:line, …]} for every `datasolver.<room>` import in the package."""
    found: dict[str, dict[str, list[str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        room = _room(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                parts = module.split(".")
                if parts[0] == "datasolver" and len(parts) > 1 and parts[1] != room:
                    where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
                    found.setdefault(room, {}).setdefault(parts[1], []).append(where)
    return found


def test_the_table_names_every_room_of_the_package() -> None:
    rooms = {_room(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert rooms == set(allowed_imports())


def test_every_import_between_rooms_is_allowed_by_the_map() -> None:
    allowed = allowed_imports()
    breaches = [f"{room} imports {other} ({', '.join(places)})"
                for room, imports in actual_imports().items()
                for other, places in imports.items() if other not in allowed.get(room, set())]
    assert breaches == []


def test_the_engine_and_the_leaves_import_no_room_above_them() -> None:
    allowed = allowed_imports()
    assert allowed["errors"] == set() and allowed["clip"] == set() and allowed["terminal"] == set()
    # Floor 0: the one way to write where links may wait, and to read JSON someone else wrote.
    assert allowed["safe_write"] == {"errors"} and allowed["untrusted_json"] == {"errors"}
    floor0 = {"errors", "clip", "safe_write", "untrusted_json"}
    for leaf in ("data", "llm", "eval", "prompts"):
        assert {"errors", "clip"} <= allowed[leaf] <= floor0, leaf


def test_the_ray_actors_module_imports_nothing_heavy() -> None:
    # A Ray actor's process imports its class's module; this one must start in a blink.
    import subprocess
    import sys

    probe = ("import sys, datasolver.request_slots; "
             "print(sorted(m for m in ('pandas', 'duckdb', 'openai', 'datasolver.pipeline') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
