"""The one-shot text-to-SQL baseline: one prompt, one query (../shared/real-model.md, issue 31).

What a user could pick instead of an agent: knowledge.md, every table's columns with types and
three sample rows, the question, and "answer with one DuckDB query in a ```sql block". The query
runs over the same data layer as datasolver (a `datasolver prepare --no-llm` scratch copy, its
document tables included); on an error the model sees the error and may answer again (at most
`REPAIRS` repairs). The accepted query is put into the scratch copy's solver.py and run with
`datasolver solve`, so the prediction is written by exactly the code that writes datasolver's.

Used by `benchmarks/real_model.py --harness oneshot` (the SQL baseline of every datasolver figure)
and by the analyst's benchmark (`oneshot_rows`: the same query, its rows rendered as a text answer).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from datasolver.ask.render import answer_data
from datasolver.data import Catalog, DataError, ScratchLayout, load_task
from datasolver.solver.scaffold import with_query

REPAIRS = 2
SAMPLE_ROWS = 3
MAX_TOKENS = 768
KNOWLEDGE_CHARS = 12_000  # knowledge.md beyond this is cut (a note says so)
ERROR_CHARS = 1_500
SYSTEM = ("You write DuckDB SQL. Answer with exactly one SELECT query in a ```sql block that "
          "returns only the columns the question asks for.")
_SQL_BLOCK = re.compile(r"```(?:sql|duckdb|SQL)?\s*\n(.*?)```", re.S)
_BARE_SELECT = re.compile(r"((?:WITH|SELECT)\b.*?)(?:;|\Z)", re.S | re.I)


@dataclass
class OneShot:
    """What the baseline did on one task."""

    sql: str | None = None
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    status: str = "no query"
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"sql": self.sql, "requests": self.requests, "errors": self.errors, "status": self.status,
                "seconds": round(self.seconds, 1)}


def prepare(task_dir: Path, scratch_root: Path) -> ScratchLayout:
    """`datasolver prepare TASK SCRATCH --no-llm`, as a user runs it; returns the scratch layout."""
    done = subprocess.run([sys.executable, "-m", "datasolver", "prepare", str(task_dir), str(scratch_root),
                           "--no-llm"], check=True, capture_output=True, text=True)
    return ScratchLayout.of(Path(done.stdout.strip().splitlines()[-1])).require()


def tables_text(catalog: Catalog) -> str:
    """Every table: its columns with types and three sample rows (`Catalog.describe`)."""
    parts = []
    for name in catalog.names():
        try:
            parts.append(catalog.describe(name, sample_rows=SAMPLE_ROWS))
        except DataError as exc:
            parts.append(f"{name}: could not be read ({exc})")
    return "\n\n".join(parts)


def first_prompt(question: str, knowledge: str, tables: str) -> list[dict[str, str]]:
    if len(knowledge) > KNOWLEDGE_CHARS:
        knowledge = knowledge[:KNOWLEDGE_CHARS] + "\n… (knowledge.md cut here)"
    user = (f"# Knowledge\n{knowledge.strip() or '(none)'}\n\n# Tables\n{tables}\n\n# Question\n{question}\n\n"
            "Answer with one DuckDB query in a ```sql block.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def query_of(reply: str) -> str | None:
    """The reply's ```sql block, else its first bare SELECT/WITH statement."""
    blocks = [b.strip() for b in _SQL_BLOCK.findall(reply) if b.strip()]
    if blocks:
        return blocks[0].rstrip().rstrip(";")
    bare = _BARE_SELECT.search(reply)
    return bare.group(1).strip() if bare else None


def ask_for_query(layout: ScratchLayout, url: str, model: str, deadline: float, *,
                  temperature: float = 0.0) -> tuple[OneShot, Catalog]:
    """The prompt, the model's query, up to `REPAIRS` repairs on errors (each run on the data layer).
    Returns what happened and the open catalog (the caller closes it)."""
    from openai import OpenAI  # the SDK datasolver itself uses

    started = time.monotonic()
    outcome = OneShot()
    task = load_task(layout.root)
    catalog = Catalog.open(layout.root, cache_dir=layout.cache)
    knowledge_file = layout.context / "knowledge.md"
    knowledge = knowledge_file.read_text(encoding="utf-8", errors="replace") if knowledge_file.is_file() else ""
    messages: list[dict[str, str]] = first_prompt(task.question, knowledge, tables_text(catalog))
    client = OpenAI(base_url=url, api_key="none", max_retries=0)
    for _ in range(REPAIRS + 1):
        left = deadline - time.monotonic()
        if left <= 5:
            outcome.status = "deadline"
            break
        reply = client.chat.completions.create(model=model, messages=messages, temperature=temperature,
                                               max_tokens=MAX_TOKENS, timeout=left)
        outcome.requests += 1
        text = reply.choices[0].message.content or ""
        sql = query_of(text)
        messages.append({"role": "assistant", "content": text})
        if sql is None:
            outcome.errors.append("no query in the reply")
            messages.append({"role": "user", "content": "Answer with one DuckDB query in a ```sql block."})
            continue
        try:
            catalog.sql(sql, timeout_s=60).fetch(1)
        except DataError as exc:
            error = str(exc)[:ERROR_CHARS]
            outcome.errors.append(error)
            messages.append({"role": "user", "content": f"The query failed:\n{error}\n\nFix it: one DuckDB query "
                                                        "in a ```sql block."})
            continue
        outcome.sql, outcome.status = sql, "query"
        break
    outcome.seconds = time.monotonic() - started
    return outcome, catalog


def solve(task_dir: Path, work: Path, url: str, model: str, deadline_s: float) -> dict[str, Any]:
    """One task: prepare, ask, and when a query ran, `datasolver solve` writes the prediction to
    `work/out/<task>/prediction.csv`."""
    deadline = time.monotonic() + deadline_s
    layout = prepare(task_dir, work / "scratch")
    try:
        outcome, catalog = ask_for_query(layout, url, model, deadline)
        catalog.close()
    except Exception as exc:  # a benchmark row, not a crash: the model server may fail or time out
        outcome = OneShot(status=f"{type(exc).__name__}: {exc}"[:200])
    prediction = work / "out" / task_dir.name / "prediction.csv"
    if outcome.sql is not None:
        layout.solver_py.write_text(with_query(layout.pristine.read_text(encoding="utf-8"), outcome.sql),
                                    encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "datasolver", "solve", str(layout.root), "--output",
                               str(work / "out")], capture_output=True, text=True)
        outcome.status = "answered" if prediction.is_file() else f"solve failed: {done.stderr.strip()[-200:]}"
    return {"prediction": prediction, **outcome.as_dict()}


def oneshot_rows(task_dir: Path, work: Path, url: str, model: str, deadline_s: float,
                 limit: int = 50) -> dict[str, Any]:
    """The one-shot *text* baseline: the same query, its first `limit` rows rendered as the answer the
    way the analyst writes a result into one (`ask.render.answer_data`: cells joined by a space, rows
    by ", "), so the two text answers are scored alike."""
    deadline = time.monotonic() + deadline_s
    layout = prepare(task_dir, work / "scratch")
    try:
        outcome, catalog = ask_for_query(layout, url, model, deadline)
    except Exception as exc:  # as in `solve`
        return {"answer": "", **OneShot(status=f"{type(exc).__name__}: {exc}"[:200]).as_dict()}
    try:
        answer = ""
        if outcome.sql is not None:
            answer = answer_data(catalog.sql(outcome.sql, timeout_s=60).fetch(limit))
    finally:
        catalog.close()
    return {"answer": answer, **outcome.as_dict()}
