"""The task model: `task_*/task.json` folders with a question and a context/ folder."""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from datasolver.data.errors import TaskError
from datasolver.data.files import ContextFiles, list_context_files
from datasolver.data.input_files import InputScope, read_capped
from datasolver.data.layout import TaskFolder
from datasolver.data.names import natural_key
from datasolver.data.question_shape import QuestionShape, read_question
from datasolver.sizes import human_size

DIFFICULTIES = ("easy", "medium", "hard", "extreme")

MAX_TASK_JSON_BYTES = 1 << 20
"""task.json is read only this far: a sparse 3 GiB one took discovery to 3.2 GB and a MemoryError."""
MAX_QUESTION_CHARS = 8_000
"""A question is kept this far (task.json may hold 1 MiB: ~340,000 CJK characters): the prompt, the
question linking, solver.py and the trace get its first MAX_QUESTION_CHARS characters and a line
saying how long it was, as the first prompt holds knowledge.md's first parts (an 80,000-character
question once took `run` to 1.5 GB). As long as a part of knowledge.md (`knowledge_file.PART_CHARS`);
real questions are under 500 characters."""
TASK_ID_MAX_BYTES = 128
"""A task id names folders (scratch, logs, output): one path component, well under NAME_MAX."""
_TASK_ID = re.compile(r"[\w.-]+")


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot name a folder, or None when it can: word characters, `.` and `-`
    only (no `/`, no control character), not `.` or `..`, at most TASK_ID_MAX_BYTES in UTF-8.

    The one rule for every folder named after a task; checked at discovery, before any path is
    built or any trace line written."""
    if not _TASK_ID.fullmatch(task_id) or task_id in (".", ".."):
        return f"task_id {task_id[:80]!r} cannot name a folder (word characters, '.' and '-' only; not '.' or '..')"
    if len(task_id.encode("utf-8")) > TASK_ID_MAX_BYTES:
        return f"task_id {task_id[:40]!r}… is longer than {TASK_ID_MAX_BYTES} bytes"
    return None


def capped_question(question: str, limit: int = MAX_QUESTION_CHARS) -> str:
    """`question` when it has at most `limit` characters, else its first `limit` and a line saying
    how much was left out (the one rule for every question a model is sent: task.json's and `ask`'s)."""
    if len(question) <= limit:
        return question
    return (question[:limit].rstrip() + f"\n… (the question goes on: these are its first {limit:,} of "
            f"{len(question):,} characters; the rest is left out)")


def task_id_key(task_id: str) -> str:
    """What two ids share when they would name the same folder on some file system (NFC, case-folded)."""
    return unicodedata.normalize("NFC", task_id).casefold()


@dataclass(frozen=True)
class Task:
    """One analysis task: a question over the files in `context_dir`."""

    task_id: str
    question: str
    dir: Path
    difficulty: str | None = None

    @cached_property
    def shape(self) -> QuestionShape:
        """What the question's wording asks for, read once (`data/question_shape.py`) and carried
        with the task to the answer checks."""
        return read_question(self.question)

    @property
    def folder(self) -> TaskFolder:
        return TaskFolder(self.dir)

    @property
    def context_dir(self) -> Path:
        return self.folder.context

    def context_files(self) -> ContextFiles:
        return list_context_files(self.context_dir)

    def knowledge(self) -> str:
        return self.context_files().knowledge_text()


@dataclass
class TaskDiscovery:
    """Tasks found under an input folder, plus the folders that could not be read as tasks."""

    tasks: list[Task] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)


def load_task(task_dir: Path) -> Task:
    """Read and validate `task_dir/task.json`; raise TaskError with a precise reason."""
    task_dir = Path(task_dir)
    spec_path = TaskFolder(task_dir).task_json
    if not spec_path.is_file():
        raise TaskError(f"{task_dir}: no task.json")
    refusal = InputScope(task_dir).refusal(spec_path)
    if refusal:
        raise TaskError(f"{spec_path}: {refusal}; the task is not run")
    try:
        read = read_capped(spec_path, MAX_TASK_JSON_BYTES)
    except OSError as exc:
        raise TaskError(f"{spec_path}: {exc.strerror or exc}; the task is not run") from exc
    if read.cut:
        raise TaskError(f"{spec_path}: {human_size(read.size)}, over the {human_size(MAX_TASK_JSON_BYTES)} a "
                        "task.json may hold (a question, an id and a difficulty); the task is not run")
    try:
        spec = json.loads(read.data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskError(f"{spec_path}: not valid UTF-8 JSON ({exc})") from exc
    except RecursionError:
        raise TaskError(f"{spec_path}: nested too deeply to be a task") from None
    if not isinstance(spec, dict):
        raise TaskError(f"{spec_path}: expected a JSON object, got {type(spec).__name__}")
    question = spec.get("question")
    if not isinstance(question, str) or not question.strip():
        raise TaskError(f"{spec_path}: 'question' is required and must be a non-empty string")
    task_id = spec.get("task_id") or task_dir.name
    if not isinstance(task_id, str):
        raise TaskError(f"{spec_path}: 'task_id' must be a string")
    problem = task_id_problem(task_id)
    if problem:
        raise TaskError(f"{spec_path}: {problem}; the task is not run")
    difficulty = spec.get("difficulty")
    if difficulty is not None and not isinstance(difficulty, str):
        raise TaskError(f"{spec_path}: 'difficulty' must be a string when present")
    return Task(task_id=task_id, question=capped_question(question.strip()), dir=task_dir, difficulty=difficulty or None)


def discover_tasks(input_dir: Path) -> TaskDiscovery:
    """Every `task_*` folder with a task.json under `input_dir`, in natural order.

    A malformed task is reported in `errors`; the others are still returned. Tasks whose ids
    name the same folder (equal after NFC and case folding) are all errors and none is run: they
    would share scratch, logs and output.
    """
    input_dir = Path(input_dir)
    if not input_dir.is_dir():
        raise TaskError(f"input folder {input_dir} does not exist")
    found = TaskDiscovery()
    candidates = [p for p in input_dir.iterdir() if p.is_dir() and p.name.startswith("task_")]
    loaded: list[Task] = []
    for task_dir in sorted(candidates, key=lambda p: natural_key(p.name)):
        try:
            loaded.append(load_task(task_dir))
        except TaskError as exc:
            found.errors.append((task_dir, str(exc)))
    by_key: dict[str, list[Task]] = {}
    for task in loaded:
        by_key.setdefault(task_id_key(task.task_id), []).append(task)
    for task in loaded:
        twins = [t for t in by_key[task_id_key(task.task_id)] if t is not task]
        if not twins:
            found.tasks.append(task)
            continue
        others = ", ".join(f"{t.dir.name} ({t.task_id!r})" for t in twins)
        found.errors.append((task.dir, f"{task.folder.task_json}: task_id {task.task_id!r} names the same "
                                       f"folder as {others}; none of them is run"))
    found.errors.sort(key=lambda e: natural_key(e[0].name))
    return found
