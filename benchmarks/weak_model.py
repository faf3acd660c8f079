"""A weak model's habits on the dev tasks: how many tasks get an answer, and at what cost.

The scripted model plays, on every task, what Qwen2.5-Coder-1.5B did behind llama.cpp (issue 25),
writing its calls as JSON in the content: run_solver first with the schema's default arguments;
then a reply with no call, one of four kinds in turn over the tasks (a ```python `result = None`
block, pandas reading a made-up CSV path, a long prose plan of ~580 tokens, a typed-in "Result"
table); then, for the "writes sql" model, the task's right query in a ```sql block, and "Done.".
The "never sql" model repeats bad replies instead. It keeps no state: its step is the number of
its own replies in the conversation, so every attempt starts over.

Beside them, as the reference, the perfect scripted model (`datasolver.examples.solver_handler`:
read_solver, edit_solver with the oracle SQL, run_solver, stop). For each model: tasks with a
prediction, tasks at score 1.0 (official metric), requests (all tasks), and requests per task. The script runs against whatever datasolver it imports, so the
same command in another checkout measures that checkout:

    python benchmarks/weak_model.py [--tasks ../shared/tasks/dev-en] [--limit N] [--work DIR]
                                    [--tool-reply-tokens N] [--models perfect,writes sql,never sql]
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import time
from pathlib import Path
from typing import Any

from datasolver.eval import evaluate_dir
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer, text
from datasolver.pipeline import RunConfig, run_batch_sync

DEFAULT_TASKS = Path(__file__).resolve().parents[1] / ".." / "shared" / "tasks" / "dev-en"
RUN_SOLVER_DEFAULTS = json.dumps({"name": "run_solver", "arguments": {"self_check": True, "show_rows": 5,
                                                                      "timeout": 120}})
BAD_REPLIES = (
    "```python\nresult = None\n```",
    "```python\nimport pandas as pd\ndf = pd.read_csv('/data/tables/main.csv')\nresult = df.head()\n```",
    " ".join(["To solve this task I will first look at the tables, then I will check which columns hold"
              " the values the question names, then filter the rows and sort them."] * 19),
    "Here is the result:\n\n| Result |\n|---|\n| 42 |\n",
)


def handler(questions: dict[str, tuple[int, str]], writes_sql: bool):
    """The scripted weak model: by task (found by its question) and by its own replies so far."""
    by_length = sorted(questions, key=len, reverse=True)

    def handle(request: dict[str, Any]):
        messages = request.get("messages") or []
        if not request.get("tools") and "## run_solver" not in str(messages[:1]):
            return text("[]")  # not a solver conversation (e.g. a relevance vote)
        prompt = "\n".join(str(m.get("content")) for m in messages if m.get("role") in ("system", "user"))
        question = next((q for q in by_length if q in prompt), None)
        if question is None:
            return text("I do not know.")
        index, sql = questions[question]
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if step == 0:
            return text(RUN_SOLVER_DEFAULTS)
        if step == 1 or not writes_sql:
            return text(BAD_REPLIES[(index + step - 1) % len(BAD_REPLIES)])
        if step == 2:
            return text(f"The query is:\n```sql\n{sql}\n```")
        return text("Done.")

    return handle


def run(tasks: Path, entries: list[dict], work: Path, model: str, limits: Any = None) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    questions = {e["question"]: (i, e["sql"]) for i, e in enumerate(entries)}
    options = {"honor_max_tokens": True} if "honor_max_tokens" in inspect.signature(ScriptedServer).parameters else {}
    if model == "perfect":
        play = solver_handler([ScriptedAnswer(e["task_id"], e["sql"], e["question"]) for e in entries])
    else:
        play = handler(questions, writes_sql=model == "writes sql")
    with ScriptedServer(handler=play, **options) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="bench", model="weak", initial_backoff=0.0)
        config = RunConfig(input_dir=tasks / "input", output_dir=work / "pred", logs_dir=work / "logs",
                           settings=settings, workers=4, task_ids=tuple(e["task_id"] for e in entries),
                           doc_llm=False, **({"limits": limits} if limits is not None else {}))
        started = time.monotonic()
        summary = run_batch_sync(config)
        seconds = time.monotonic() - started
        requests = len(server.requests)
    report = evaluate_dir(work / "pred", tasks / "output", explain=False)
    scores = [t.score for t in report.tasks if t.task_id in {e["task_id"] for e in entries}]
    answered = sum(1 for r in summary.tasks if r.status in ("solved", "fallback"))
    return {"tasks": len(entries), "answered": answered, "at_1.0": sum(1 for s in scores if s == 1.0),
            "requests": requests, "requests_per_task": round(requests / max(len(entries), 1), 2),
            "seconds": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work" / "weak_model")
    parser.add_argument("--tool-reply-tokens", type=int, default=None,
                        help="Limits.tool_reply_tokens for the run (0: no cap); default: the agent's")
    parser.add_argument("--models", default="perfect,writes sql,never sql")
    args = parser.parse_args()
    limits = None
    if args.tool_reply_tokens is not None:
        from datasolver.agent import Limits

        limits = Limits(tool_reply_tokens=args.tool_reply_tokens or None)
    oracle = args.tasks / "oracle.jsonl"
    if not oracle.is_file():
        raise SystemExit(f"no oracle.jsonl in {args.tasks}")
    entries = [json.loads(line) for line in oracle.read_text(encoding="utf-8").splitlines() if line.strip()]
    entries = entries[: args.limit]
    for model in args.models.split(","):
        result = run(args.tasks, entries, args.work / model.replace(" ", "_"), model, limits)
        print(f"{model}: {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    main()
