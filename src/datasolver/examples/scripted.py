"""A scripted stand-in for the model: it plays the four solver tools to write a known query.

For each request it finds the task (by question text or task id in the messages). A direct answer
request (tool calls off) gets the task's query in a ```sql block at once (a fallible answer says it
must look at the data first). Otherwise it counts the tool calls already made in the conversation
and plays the next step: explore_data for each scripted
query, read_solver, edit_solver (replacing the `result = None` line whose number and hash it reads
from the read_solver result, as a model would), run_solver, then a final text. It keeps no state
of its own, so retries, restarts and concurrent tasks all work.

Used by `datasolver demo` (the bundled examples, or one's own tasks with `--input DIR --answers
FILE`) and by the tests (dev tasks' oracle SQL).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.data.layout import TaskFolder
from datasolver.data.tasks import load_task
from datasolver.errors import DatasolverError
from datasolver.llm.fake import Turn, text, tool_call
from datasolver.solver.scaffold import RESULT_LINE, query_code

Handler = Callable[[dict[str, Any]], Turn]

_RESULT_LINE = re.compile(r"^(\d+):([A-Z]{2})\|" + re.escape(RESULT_LINE) + r"\s*$", re.MULTILINE)
_NUMBERED_LINE = re.compile(r"^(\d+):[A-Z]{2}\|", re.MULTILINE)
_PAST_END = re.compile(r"^offset \d+ is past the end", re.MULTILINE)
MAX_READS = 6  # read_solver calls before giving up on finding the `result = None` line
FINAL_TEXT = "Done: solver.py computes the answer and run_solver wrote prediction.csv."
NO_SCRIPT_TEXT = "This scripted model has no answer for this task."
DIRECT_TEXT = "```sql\n{sql}\n```"  # a direct answer request (tools off) gets the query at once
EXPLORE_FIRST_TEXT = "I need to look at the data first."  # a fallible answer goes through the tools


@dataclass(frozen=True)
class ScriptedAnswer:
    """What the scripted model does for one task: optional explore queries, then the final SQL.

    A fallible answer (`mistake` set) first writes `mistaken_code`, and switches to the right
    SQL only after a message names its check (`CHECK <mistake>:` in the run_solver result, or in
    the send-back). A `stubborn` one stops after its first run whatever the result says, and
    fixes only when sent back.
    """

    task_id: str
    sql: str
    question: str | None = None
    explore: tuple[str, ...] = field(default_factory=tuple)
    mistake: str | None = None  # the check name that flags mistaken_code
    mistaken_code: str | None = None  # query-area code with the mistake
    stubborn: bool = False

    def with_mistake(self, check: str, code: str, *, stubborn: bool = False) -> "ScriptedAnswer":
        return dataclasses.replace(self, mistake=check, mistaken_code=code, stubborn=stubborn)

    @property
    def keys(self) -> tuple[str, ...]:
        """Strings that identify the task in a prompt, most specific first."""
        return tuple(k for k in (self.question, self.task_id) if k)

    def query_code(self) -> str:
        """The query-area code the model writes in place of `result = None`."""
        return query_code(self.sql)


class AnswersError(DatasolverError, ValueError):
    """An answers file the scripted model cannot use: unreadable, not JSON, or an entry of another shape."""


ANSWERS_FORM = '{"<task_id>": "SELECT …"} or {"<task_id>": {"sql": "SELECT …", "explore": ["\\\\tables", …]}}'
"""The two forms an answers file's entries take (the bundled solutions.json uses the second)."""


def load_answers(solutions_json: Path, input_dir: Path | None = None) -> dict[str, ScriptedAnswer]:
    """Answers from a `{task_id: "SQL"}` or `{task_id: {"sql": ..., "explore": [...]}}` file;
    questions from input_dir. AnswersError says what is wrong with the file."""
    path = Path(solutions_json)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AnswersError(f"cannot read the answers file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise AnswersError(f"the answers file {path} is not JSON ({exc}); write {ANSWERS_FORM}") from None
    if not isinstance(raw, dict) or not raw:
        raise AnswersError(f"the answers file {path} holds no answers; write {ANSWERS_FORM}")
    answers = {}
    for task_id, entry in raw.items():
        if isinstance(entry, str):
            entry = {"sql": entry}
        explore = entry.get("explore", []) if isinstance(entry, dict) else None
        if (not isinstance(entry, dict) or not isinstance(entry.get("sql"), str) or not entry["sql"].strip()
                or not isinstance(explore, list) or not all(isinstance(q, str) for q in explore)):
            raise AnswersError(f"the answers file {path}: the answer for {task_id!r} is not SQL text nor "
                               f'{{"sql": SQL, "explore": [queries]}}; write {ANSWERS_FORM}')
        question = None
        if input_dir is not None and TaskFolder(Path(input_dir) / task_id).is_task():
            question = load_task(Path(input_dir) / task_id).question
        answers[task_id] = ScriptedAnswer(task_id, entry["sql"], question, tuple(explore))
    return answers


def solver_handler(
    answers: Mapping[str, ScriptedAnswer] | list[ScriptedAnswer],
    *,
    other: Callable[[dict[str, Any]], Turn] | None = None,
) -> Handler:
    """A ScriptedServer handler that solves each known task through the real solver tools.

    Requests that do not offer the solver tools (e.g. a document-structuring call) go to `other`,
    or get a plain text answer.
    """
    by_key = sorted(
        ((key, a) for a in (answers.values() if isinstance(answers, Mapping) else answers) for key in a.keys),
        key=lambda item: len(item[0]), reverse=True,
    )

    def handle(request: dict[str, Any]) -> Turn:
        messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
        tools = {t.get("function", {}).get("name") for t in request.get("tools") or []}
        if not {"read_solver", "edit_solver", "run_solver"} <= tools:
            return other(request) if other is not None else text(NO_SCRIPT_TEXT)
        answer = _find_answer(messages, by_key)
        if answer is None:
            return text(NO_SCRIPT_TEXT)
        if request.get("tool_choice") == "none":  # the direct answer request: tools are off
            return text(DIRECT_TEXT.format(sql=answer.sql) if answer.mistake is None else EXPLORE_FIRST_TEXT)
        return _next_step(answer, messages, has_explore="explore_data" in tools)

    return handle


def _find_answer(messages: list[dict[str, Any]], by_key: list[tuple[str, ScriptedAnswer]]) -> ScriptedAnswer | None:
    # Prompt messages first: a tool result may quote another task's text only by accident.
    ordered = [m for m in messages if m.get("role") in ("system", "user")] + [
        m for m in messages if m.get("role") not in ("system", "user")
    ]
    for message in ordered:
        content = _content(message)
        for key, answer in by_key:
            if key in content:
                return answer
    return None


def _next_step(answer: ScriptedAnswer, messages: list[dict[str, Any]], *, has_explore: bool) -> Turn:
    calls = [c for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []]
    done = [c.get("function", {}).get("name") for c in calls]
    explore = answer.explore if has_explore else ()
    n_explored = done.count("explore_data")
    if n_explored < len(explore):
        return tool_call("explore_data", {"query": explore[n_explored]})
    if "read_solver" not in done:
        return tool_call("read_solver", {})
    first_code = answer.mistaken_code if answer.mistake else answer.query_code()
    if "edit_solver" not in done:
        target = _result_line(messages)
        if target is not None:
            line, line_hash = target
            return tool_call("edit_solver", {"start_line": line, "start_hash": line_hash,
                                             "new_content": first_code})
        if not _shows_code(messages, first_code):  # else compaction cut the edit: it is in solver.py
            offset = _next_offset(messages)
            if offset is not None and done.count("read_solver") < MAX_READS:  # the view was cut: read on
                return tool_call("read_solver", {"offset": offset})
    if "run_solver" not in done:
        return tool_call("run_solver", {})
    if answer.mistake and done.count("edit_solver") == 1 and _told(answer, messages):
        return _fix(answer, first_code, messages, done)
    if done[-1] == "edit_solver":
        return tool_call("run_solver", {})
    return text(FINAL_TEXT)


def _next_offset(messages: list[dict[str, Any]]) -> int | None:
    """Where to read solver.py on: after the last line the latest view showed, or from the top
    when the latest read ran past the end (the file is shorter than the script remembers)."""
    for message in reversed(messages):
        if message.get("role") != "tool":
            continue
        content = _content(message)
        if _PAST_END.search(content):
            return 1
        numbers = _NUMBERED_LINE.findall(content)
        if numbers:
            return int(numbers[-1]) + 1
    return None


def _shows_code(messages: list[dict[str, Any]], code: str) -> bool:
    """Whether a solver.py view in the conversation (a tool result, or the "solver.py as it is now"
    of a compaction summary) shows ``code`` (at least its first two lines) already in place: the
    script's own edit, whose call compaction may have cut."""
    wanted = code.split("\n")
    need = min(2, len(wanted))
    for message in messages:
        if message.get("role") not in ("tool", "user"):
            continue
        rows = [m.group(3) for m in map(_LINE.match, _content(message).splitlines()) if m]
        for index, content in enumerate(rows):
            if content != wanted[0]:
                continue
            shown = rows[index:index + len(wanted)]
            if len(shown) >= need and shown == wanted[:len(shown)]:
                return True
    return False


def _told(answer: ScriptedAnswer, messages: list[dict[str, Any]]) -> bool:
    """The check was named after the first run: in its result, or (stubborn) in a send-back."""
    marker = f"CHECK {answer.mistake}:"
    first_run = next(i for i, m in enumerate(messages) if m.get("role") == "tool" and _is_run_result(m, messages))
    later = messages[first_run:]
    if answer.stubborn:
        return any(m.get("role") == "user" and marker in _content(m) for m in later)
    return any(m.get("role") in ("tool", "user") and marker in _content(m) for m in later)


def _is_run_result(message: dict[str, Any], messages: list[dict[str, Any]]) -> bool:
    names = {c.get("id"): c.get("function", {}).get("name")
             for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []}
    return names.get(message.get("tool_call_id")) == "run_solver"


def _fix(answer: ScriptedAnswer, first_code: str, messages: list[dict[str, Any]], done: list[str]) -> Turn:
    """read_solver, then replace the mistaken lines with the right query."""
    if done[-1] != "read_solver":
        return tool_call("read_solver", {})
    view = _content(messages[-1])
    wrong = first_code.split("\n")
    numbered = [_LINE.match(line) for line in view.splitlines()]
    rows = [(int(m.group(1)), m.group(2), m.group(3)) for m in numbered if m]
    for index, (number, digest, content) in enumerate(rows):
        if content == wrong[0] and [r[2] for r in rows[index:index + len(wrong)]] == wrong:
            end_number, end_digest, _ = rows[index + len(wrong) - 1]
            return tool_call("edit_solver", {"start_line": number, "start_hash": digest, "end_line": end_number,
                                             "end_hash": end_digest, "new_content": answer.query_code()})
    return text(FINAL_TEXT)  # the mistaken lines are gone: nothing the script knows to fix


_LINE = re.compile(r"^(\d+):([A-Z]{2})\|(.*)$")


def _result_line(messages: list[dict[str, Any]]) -> tuple[int, str] | None:
    """Number and hash of the `result = None` line in the latest tool result that shows it."""
    for message in reversed(messages):
        if message.get("role") == "tool":
            match = _RESULT_LINE.search(_content(message))
            if match:
                return int(match.group(1)), match.group(2)
    return None


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
