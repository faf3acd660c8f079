"""Bundled example tasks (KDD format) with gold answers and the scripted turns that solve them.

    input/task_demo_*/{task.json, context/}   four small hand-written tasks (CSV, JSON, SQLite,
                                              a Markdown document, a video, knowledge.md)
    output/task_demo_*/gold.csv               the expected answers
    solutions.json                            the SQL the scripted model writes into solver.py
    sources/library.sql                       source of the one SQLite file
    sources/make_video.py                     generator of task_demo_video's screencast (Pillow,
                                              PyAV, espeak-ng)

They are package data: `datasolver demo` runs them from wherever the package is installed (the
input is only read, never written).
"""

from __future__ import annotations

from pathlib import Path

from datasolver.examples.scripted import ScriptedAnswer, load_answers, solver_handler

EXAMPLES_DIR = Path(__file__).resolve().parent


def input_dir() -> Path:
    """The bundled task folders (`task_demo_*`)."""
    return EXAMPLES_DIR / "input"


def gold_dir() -> Path:
    """The gold answers, `<task_id>/gold.csv`."""
    return EXAMPLES_DIR / "output"


def demo_answers() -> dict[str, ScriptedAnswer]:
    """The scripted answers for the bundled tasks."""
    return load_answers(EXAMPLES_DIR / "solutions.json", input_dir())


__all__ = [
    "demo_answers",
    "gold_dir",
    "input_dir",
    "solver_handler",
]
