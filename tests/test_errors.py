"""One error root: every room's named errors derive from DatasolverError, each with a one-line
docstring, and the CLI turns any of them into `Error: …` with exit code 1 in one place."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import datasolver
from datasolver.cli import USER_ERRORS, cli
from datasolver.errors import DatasolverError, PromptError, error_record, error_shape

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def _named_errors() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(datasolver.__path__, "datasolver."):
        if info.name.endswith(".errors"):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def test_every_room_error_derives_from_the_one_root_and_has_a_one_line_docstring() -> None:
    errors = _named_errors()
    rooms = {e.__module__.split(".")[1] for e in errors}
    assert {"data", "llm", "solver", "documents", "agent", "pipeline", "eval", "ask"} <= rooms
    for error in errors:
        assert issubclass(error, DatasolverError), error
        doc = (error.__doc__ or "").strip()
        assert doc and "\n" not in doc, f"{error.__qualname__} needs a one-line docstring"


def test_there_is_one_prompt_error() -> None:
    from datasolver.agent.prompts import render_prompt as solver_prompt
    from datasolver.ask.prompts import render_prompt as ask_prompt
    from datasolver.documents.prompts import render_prompt as docs_prompt

    for render in (solver_prompt, ask_prompt, docs_prompt):
        try:
            render("no_such_prompt")
        except PromptError as exc:
            assert "no_such_prompt" in str(exc)
        else:
            raise AssertionError(f"{render} accepted a missing prompt file")


def test_the_json_error_shape() -> None:
    assert error_record("retry", "fix it") == {"ok": False, "error": "retry", "message": "fix it"}
    assert error_shape(PromptError("gone")) == {"ok": False, "error": "PromptError", "message": "gone"}


def test_the_cli_maps_library_errors_to_error_and_exit_1(tmp_path: Path) -> None:
    assert DatasolverError in USER_ERRORS
    result = CliRunner().invoke(cli, ["eval-compare", str(_run_file(tmp_path, "a", {"t1": 1.0})),
                                      "-b", str(_run_file(tmp_path, "b", {"t2": 1.0}))])
    assert result.exit_code == 1
    assert result.output.strip().endswith("Error: the two systems share no scored task")
    assert "Traceback" not in result.output


def test_a_programmer_error_keeps_its_traceback() -> None:
    @cli.command("boom-for-test", hidden=True)
    def boom() -> None:
        raise KeyError("bug")

    try:
        result = CliRunner().invoke(cli, ["boom-for-test"])
        assert isinstance(result.exception, KeyError)
        assert result.exit_code == 1 and "Error:" not in result.output
    finally:
        cli.commands.pop("boom-for-test")


def _run_file(tmp_path: Path, name: str, scores: dict[str, float]) -> Path:
    from datasolver.eval import evaluate_dir

    pred, gold = tmp_path / name / "pred", tmp_path / name / "gold"
    for task, score in scores.items():
        for root in (pred, gold):
            (root / task).mkdir(parents=True, exist_ok=True)
        (gold / task / "gold.csv").write_text("a\n1\n", encoding="utf-8")
        (pred / task / "prediction.csv").write_text("a\n1\n" if score == 1.0 else "a\n2\n", encoding="utf-8")
    path = tmp_path / f"{name}.json"
    evaluate_dir(pred, gold).save(path)
    return path
