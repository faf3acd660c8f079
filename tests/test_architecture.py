"""The map is checked: every import between rooms is one that docs/architecture.md allows, and no
module imports (at import time, inside a function or for type checking) a module that imports it back."""

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


def _module_name(path: Path) -> str:
    parts = ("datasolver", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


def module_imports() -> dict[str, set[str]]:
    """Module → the package modules it imports anywhere in its text (a `from P import name` counts
    as importing P.name when that is a module, else P; a package's __init__ is the module P)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                found = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in found:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other through imports (strongly connected, > 1)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []
    for root in sorted(graph):
        if root in order:
            continue
        order[root] = low[root] = len(order)
        stack.append(root)
        walk = [(root, iter(sorted(graph[root])))]
        while walk:  # iterative Tarjan: the import graph is deep enough to worry the recursion limit
            node, edges = walk[-1]
            for nxt in edges:
                if nxt not in order:
                    order[nxt] = low[nxt] = len(order)
                    stack.append(nxt)
                    walk.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in stack:
                    low[node] = min(low[node], order[nxt])
            else:
                walk.pop()
                if walk:
                    low[walk[-1][0]] = min(low[walk[-1][0]], low[node])
                if low[node] == order[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        cycles.append(sorted(group))
    return cycles


def test_no_module_imports_a_module_that_imports_it_back() -> None:
    assert import_cycles(module_imports()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


# Modules the package runs as programs rather than imports (`python -m …`).
RUN_AS_PROGRAMS = {
    "datasolver.__main__": "`python -m datasolver`",
    "datasolver.cli.reference": "`python -m datasolver.cli.reference` writes docs/cli.md and the settings tables",
    "datasolver.data.cache_fill": "`python -m datasolver.data.cache_fill`, the child `sql` leaves a big file's cache to",
}


def package_modules_imported_by(folders: list[Path]) -> dict[str, list[str]]:
    """Package module → the files under `folders` that import it (`from P import n` counts P.n when
    that is a module, else P)."""
    modules = set(module_imports())
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                             for a in node.names]
                else:
                    continue
                for name in names:
                    if name in modules:
                        found.setdefault(name, []).append(path.name)
    return found


def test_no_module_of_the_package_is_imported_only_by_tests() -> None:
    """What exists for tests (tiny tasks, scripted turns, a sample run, the fallible model's
    mistakes) lives in tests/helpers/: every package module a test or a benchmark imports is one
    the package itself imports, loads by name (a command's module) or runs as a program."""
    from datasolver.cli import COMMAND_MODULES

    reached = set().union(*module_imports().values()) | set(RUN_AS_PROGRAMS)
    reached |= {f"datasolver.cli.{module}" for module in COMMAND_MODULES.values()}
    outside = package_modules_imported_by([PACKAGE.parent.parent / "tests", PACKAGE.parent.parent / "benchmarks"])
    only_tests = {name: sorted(set(files)) for name, files in outside.items() if name not in reached}
    assert only_tests == {}, "move them to tests/helpers/"


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
    assert allowed["errors"] == set() and allowed["clip"] == set() and allowed["sizes"] == set()
    assert allowed["terminal"] == set()
    # Floor 0: the one way to write where links may wait, to read JSON someone else wrote, and to
    # declare a settings field.
    assert allowed["safe_write"] == {"errors"} and allowed["untrusted_json"] == {"errors"}
    assert allowed["settings"] == {"errors"}
    floor0 = {"errors", "clip", "safe_write", "untrusted_json", "settings"}
    for leaf in ("llm", "eval", "prompts"):
        assert {"errors", "clip"} <= allowed[leaf] <= floor0, leaf
    # The engine and the sandbox also show byte counts; the sandbox replaces solver.py the one safe way.
    # The engine writes results as text for people (results.py): the one control-character escape, a leaf.
    assert allowed["data"] == {"errors", "settings", "clip", "sizes", "safe_write", "terminal"}  # prepared.json, never through a link
    assert allowed["sandbox"] == {"errors", "settings", "clip", "sizes", "safe_write"}


def test_the_sandbox_knows_nothing_of_what_it_runs() -> None:
    # The room runs solver.py and the documents' normalizer alike: no name of either in its code.
    for path in (PACKAGE / "sandbox").rglob("*.py"):
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith("#"))
        assert "datasolver.solver" not in code and "datasolver.documents" not in code, path


def test_the_ray_actors_module_imports_nothing_heavy() -> None:
    # A Ray actor's process imports its class's module; this one must start in a blink.
    import subprocess
    import sys

    probe = ("import sys, datasolver.request_slots; "
             "print(sorted(m for m in ('pandas', 'duckdb', 'openai', 'datasolver.pipeline') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# The task layout's names: spelled only in data/layout.py. eval/ is a leaf below data/ (it may not
# import it): the scorer reads the competition's prediction.csv and a task.json's difficulty itself.
LAYOUT_MODULE = PACKAGE / "data" / "layout.py"
LAYOUT_NAMES = {"context", "derived", "workdir", "task.json", "prediction.csv"}
LAYOUT_NAME_EXEMPT = {("eval", "task.json"), ("eval", "prediction.csv")}


def layout_literals(code: str, room: str) -> list[tuple[int, str]]:
    """(line, name) of each string literal in `code` that is exactly a layout name. Docstrings are
    prose and are skipped; comments are not literals; a name inside a longer string (a message,
    an f-string's text) is not a path built from it."""
    tree = ast.parse(code)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in LAYOUT_NAMES
                  and id(node) not in docstrings and (room, node.value) not in LAYOUT_NAME_EXEMPT)


def test_only_the_layout_module_spells_the_task_folder_names() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line} {name!r}" for path in sorted(PACKAGE.rglob("*.py"))
             if path != LAYOUT_MODULE
             for line, name in layout_literals(path.read_text(encoding="utf-8"), _room(path))]
    assert found == []


def test_the_layout_check_finds_a_spelled_folder_name() -> None:
    code = ('"""Reads context/ and derived/ (prose, not a path)."""\n'
            'X = ROOT / "derived"\n'
            'Y = f"see {ROOT}/workdir"  # "context" in a comment\n'
            'Z = ("the derived folder", "task.json")\n')
    assert layout_literals(code, "agent") == [(2, "derived"), (4, "task.json")]
    assert layout_literals(code, "eval") == [(2, "derived")]


def _words_in_code(source: str) -> set[str]:
    """Lower-cased words of a module's string constants (docstrings aside), names, attributes and imports."""
    tree = ast.parse(source)
    docstrings = {id(body[0].value) for body in [getattr(n, "body", None) for n in ast.walk(tree)]
                  if isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                  and isinstance(body[0].value, ast.Constant)}
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words += re.findall(r"\w+", node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.alias):
            words += node.name.split(".")
    return {w.lower() for w in words}


def test_the_agent_room_names_no_tool() -> None:
    # What the agent does for one tool sits in the tools' room (the loop's two callbacks,
    # SOLVER_HOOKS: its reactions, how a call reads in a summary of older turns) or in the value it
    # returns; a tool name in the room's code (a string or a name, docstrings and comments aside)
    # would be a branch on that tool, or a text that goes stale when the tool is renamed. Nor does
    # the loop start the sandbox's fork server itself (SOLVER_HOOKS.before_call). Prompt files are
    # text for the model, not code: they may name tools.
    from datasolver.solver.tools import SOLVER_TOOLS

    names = {tool.name for tool in SOLVER_TOOLS}
    found = {}
    for path in sorted((PACKAGE / "agent").glob("*.py")):
        named = names & _words_in_code(path.read_text(encoding="utf-8"))
        if named:
            found[path.name] = sorted(named)
    assert found == {}
    loop = _words_in_code((PACKAGE / "agent" / "loop.py").read_text(encoding="utf-8"))
    assert "fork_server" not in loop and "prestart_fork_server" not in loop


def test_the_tool_name_check_finds_a_named_tool() -> None:
    planted = '''"""explore_data in a docstring is fine."""
def f(toolbox):
    # edit_solver in a comment is fine
    return toolbox.call("read_solver", {})
'''
    words = _words_in_code(planted)
    assert "read_solver" in words and "edit_solver" not in words and "explore_data" not in words
    assert "run_solver" in _words_in_code("from x import run_solver")


def test_no_hand_driven_coroutine_and_no_thread_pool_to_escape_a_running_loop() -> None:
    # One sync and one async entry per library call: a sync entry is plain blocking work or
    # `asyncio.run` of the async one; async code calls the async entry or `asyncio.to_thread`.
    # The one pool is the batch's default executor (its size, pipeline/batch.py).
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "send"
                    and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value is None):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} drives a coroutine by hand")
            names = {node.id} if isinstance(node, ast.Name) else {node.attr} if isinstance(node, ast.Attribute) else set()
            if names & {"ThreadPoolExecutor", "run_coroutine_threadsafe"} and path != PACKAGE / "pipeline" / "batch.py":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} uses {names.pop()}")
    assert found == []


# -- package faces -----------------------------------------------------------------------------------
# A package's __init__ (its face) hands on what other rooms import from it, and nothing else: each
# further name is one more a reader must learn to ignore, and a test importing it reaches past the
# module that owns it. Tests and benchmarks import a name from the module that defines it.
#
# The exceptions: names people import from a face though no room does, the library API that the
# docs show (`from datasolver.<room> import …` in README.md and docs/*.md; checked below, so a name
# leaves this list when its docs stop showing it).
PUBLIC_NAMES = {
    "agent": {"Deadline", "Limits", "TaskRun", "solve_task"},  # docs/agent.md: solving one prepared task from a script
    "ask": {"ask_data", "open_package", "Analyst", "AskConfig", "AskLimits"},  # docs/ask.md
    "data": {"Catalog", "render_result"},  # docs/data.md: the engine as a library (and solver.py's import)
    "documents": {"PrepareOptions", "prepare_documents", "document_table_hints"},  # docs/documents.md
    "solver": {"prepare_scratch", "restore_scaffold", "SolverToolbox", "tool_schemas"},  # docs/sandbox.md
}
# Faces not held to the rule yet, and why.
FACES_NOT_CHECKED: dict[str, str] = {}  # package → why its face is not held to the rule (none left)
_DOCS = [DOC.parent.parent / "README.md", *sorted(DOC.parent.glob("*.md"))]


def face_exports() -> dict[str, set[str]]:
    """Package → the names its __init__ exports (`__all__`), for every package that has one."""
    faces = {}
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        for node in ast.parse(init.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
                faces[init.parent.name] = set(ast.literal_eval(node.value))
    return faces


def imported_from_faces(folder: Path) -> dict[str, dict[str, list[str]]]:
    """Package → {name: [file:line, …]} for each name taken from its face under `folder` outside
    that package: `from datasolver.<package> import name`, or `<package>.name` after
    `from datasolver import <package>`."""
    found: dict[str, dict[str, list[str]]] = {}

    def take(face: str, name: str, where: str) -> None:
        found.setdefault(face, {}).setdefault(name, []).append(where)

    for path in sorted(folder.rglob("*.py")):
        inside = _room(path) if path.is_relative_to(PACKAGE) else None
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}  # a local name → the package it is
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                parts = node.module.split(".")
                for alias in node.names:
                    if len(parts) == 2 and parts[0] == "datasolver" and parts[1] != inside:
                        take(parts[1], alias.name, f"{path.name}:{node.lineno}")
                    elif parts == ["datasolver"] and (PACKAGE / alias.name / "__init__.py").is_file():
                        bound[alias.asname or alias.name] = alias.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and bound[node.value.id] != inside):
                take(bound[node.value.id], node.attr, f"{path.name}:{node.lineno}")
    return found


def _is_module(path: Path) -> bool:
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def face_surplus(exports: dict[str, set[str]], imported: dict[str, dict[str, list[str]]],
                 public: dict[str, set[str]]) -> dict[str, list[str]]:
    """Package → the exported names that no other room imports and the docs do not show."""
    surplus = {face: sorted(names - set(imported.get(face, {})) - public.get(face, set()))
               for face, names in exports.items()}
    return {face: names for face, names in surplus.items() if names}


def test_a_package_face_exports_what_other_rooms_import_and_nothing_else() -> None:
    exports = {face: names for face, names in face_exports().items() if face not in FACES_NOT_CHECKED}
    assert face_surplus(exports, imported_from_faces(PACKAGE), PUBLIC_NAMES) == {}, (
        "import these from their own modules where only tests, benchmarks or the room itself use them")


def test_what_other_rooms_import_from_a_face_is_on_it() -> None:
    exports = face_exports()
    missing = {}
    for face, names in imported_from_faces(PACKAGE).items():
        # a module of the package (`from datasolver.sandbox import safe_files`) is no name of its face
        absent = {n for n in names if n not in exports.get(face, {n}) and not _is_module(PACKAGE / face / n)}
        if absent:
            missing[face] = sorted(absent)
    assert missing == {}


def test_the_public_names_are_what_the_docs_import_from_a_face() -> None:
    shown: dict[str, set[str]] = {}
    for doc in _DOCS:
        for module, names in re.findall(r"^from datasolver\.(\w+) import ([\w, ]+)$", doc.read_text(encoding="utf-8"),
                                        flags=re.MULTILINE):
            shown.setdefault(module, set()).update(n.strip() for n in names.split(","))
    assert shown == PUBLIC_NAMES
    exports = face_exports()
    assert {face: names - exports[face] for face, names in shown.items() if names - exports[face]} == {}


def test_the_face_check_finds_a_name_only_tests_import() -> None:
    exports = {"data": {"Catalog", "Relation", "render_result"}, "llm": {"LLMClient"}}
    imported = {"data": {"Catalog": ["solve.py:3"]}, "llm": {"LLMClient": ["loop.py:9"]}}
    assert face_surplus(exports, imported, {"data": {"render_result"}}) == {"data": ["Relation"]}
