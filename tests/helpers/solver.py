"""Tiny task folders (orders by city; papers by year), and calling a solver tool from a JSON string
or through edit_solver's line address, for every room's tests and the answer-check benchmark."""

from __future__ import annotations

import json
from pathlib import Path

from datasolver.data.layout import TaskFolder
from datasolver.solver.hashline import line_hash
from datasolver.solver.scaffold import RESULT_LINE
from datasolver.solver.tools import SolverToolbox, ToolResult

TINY_QUESTION = "Which cities have orders, and how many orders does each have?"


def make_tiny_task(parent: Path, task_id: str = "task_tiny") -> Path:
    """A task folder with task.json, a CSV and a JSON table; returns the task folder."""
    task = TaskFolder(Path(parent) / task_id)
    (task.context / "csv").mkdir(parents=True)
    (task.context / "json").mkdir()
    task.task_json.write_text(
        json.dumps({"task_id": task_id, "difficulty": "easy", "question": TINY_QUESTION}), encoding="utf-8"
    )
    (task.context / "csv" / "orders.csv").write_text(
        "order_id,city,amount\n1,Paris,10.5\n2,Lyon,3\n3,Paris,7\n4,Nice,\n", encoding="utf-8"
    )
    (task.context / "json" / "cities.json").write_text(
        json.dumps({"table": "cities", "records": [{"city": "Paris", "country": "FR"}, {"city": "Lyon", "country": "FR"}]}),
        encoding="utf-8",
    )
    (task.context / "knowledge.md").write_text("amount is in euros.\n", encoding="utf-8")
    return task.root


PAPER_QUESTION = "What are the titles of the papers published in 2020? List them alphabetically."
PAPER_SQL = "SELECT title FROM paper WHERE year = 2020 ORDER BY title ASC"  # the right answer


PAPER_TABLES = {
    "author": "aid,name\n1,Ada Lovelace\n2,Alan Turing\n3,Grace Hopper\n",
    "paper": ("pid,title,year\n10,Zebra Streams,2020\n11,Adaptive Joins,2020\n12,Old Indexes,2019\n"
              "13,Median Sketches,2020\n14,Future Plans,2021\n"),
    "writes": "aid,pid\n1,10\n2,11\n3,12\n1,13\n2,14\n",
}
"""The paper task's tables by name, as CSV text: who wrote which paper, in which year."""


def make_paper_task(parent: Path, task_id: str = "task_paper") -> Path:
    """A small academic task (authors, papers, who wrote what) whose answer is PAPER_SQL."""
    task = TaskFolder(Path(parent) / task_id)
    (task.context / "csv").mkdir(parents=True)
    task.task_json.write_text(
        json.dumps({"task_id": task_id, "difficulty": "easy", "question": PAPER_QUESTION}), encoding="utf-8"
    )
    for name, text in PAPER_TABLES.items():
        (task.context / "csv" / f"{name}.csv").write_text(text, encoding="utf-8")
    (task.context / "knowledge.md").write_text("year is the year of publication.\n", encoding="utf-8")
    return task.root


def call_json(toolbox: SolverToolbox, name: str, json_args: str) -> ToolResult:
    """Call a tool the way the agent does: JSON text in, validated against the tool's model."""
    return toolbox.call(name, json.loads(json_args))


def result_line_address(toolbox: SolverToolbox) -> tuple[int, str]:
    """(line number, hash) of the `result = None` line, read through read_solver."""
    text = toolbox.call("read_solver", {}).text
    for row in text.splitlines():
        address, _, content = row.partition("|")
        if content == RESULT_LINE:
            number, _, digest = address.partition(":")
            assert digest == line_hash(content)
            return int(number), digest
    raise AssertionError("no `result = None` line in solver.py")


def set_query(toolbox: SolverToolbox, code: str) -> ToolResult:
    """Replace the `result = None` line with `code` through edit_solver."""
    number, digest = result_line_address(toolbox)
    return toolbox.call("edit_solver", {"start_line": number, "start_hash": digest, "new_content": code})
