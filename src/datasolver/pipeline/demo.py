"""`datasolver demo`: the bundled example tasks (or one's own), end to end, against a scripted model.

The model is a local OpenAI-compatible server (datasolver.llm.fake) that replays prepared tool
calls; everything else is the real thing: HTTP client, agent loop, tools, sandbox, summary. With
one's own task folders and an answers file (`{task_id: SQL}`), the script writes that SQL for each
task, so the pipeline can be tried on one's own data before a model is set up.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from datasolver import examples
from datasolver.data import DataError, discover_tasks
from datasolver.examples.scripted import ANSWERS_FORM, ScriptedAnswer, load_answers
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline.batch import run_batch_sync
from datasolver.pipeline.config import RunConfig
from datasolver.pipeline.errors import InputError
from datasolver.pipeline.progress import Progress
from datasolver.pipeline.summary import RunSummary

DEMO_MODEL = "scripted-demo"


@dataclass(frozen=True)
class DemoResult:
    """What the demo ran and where everything went."""

    summary: RunSummary
    input_dir: Path
    gold_dir: Path | None
    """The gold answers to score against (None: one's own tasks without --gold)."""
    output_dir: Path
    logs_dir: Path
    base_url: str
    """The scripted server's URL (gone once the demo returns)."""
    requests: int
    """Chat requests the scripted server answered."""
    answers_file: Path | None = None
    """One's own answers file (None: the bundled examples' solutions)."""
    unanswered: tuple[str, ...] = field(default_factory=tuple)
    """Tasks of the input the answers file has no answer for: not run."""


def run_demo(
    output_dir: Path, *, logs_dir: Path | None = None, workers: int = 3, progress: Progress | None = None,
    latency_s: float = 0.0, input_dir: Path | None = None, answers_file: Path | None = None,
    gold_dir: Path | None = None,
) -> DemoResult:
    """Solve the bundled examples, or the tasks of `input_dir` that `answers_file` answers, into
    `output_dir` (always from scratch: force=True). InputError when the answers name a task the
    input does not hold; AnswersError when the file cannot be used."""
    output_dir = Path(output_dir)
    logs_dir = Path(logs_dir) if logs_dir is not None else output_dir.with_name(output_dir.name + "-logs")
    if input_dir is None:
        input_dir, gold_dir, answers, unanswered = examples.input_dir(), examples.gold_dir(), examples.demo_answers(), ()
    else:
        if answers_file is None:
            raise InputError(f"the scripted model needs an answers file for {input_dir}: {ANSWERS_FORM}")
        answers, unanswered = own_answers(Path(input_dir), Path(answers_file))
    handler = examples.solver_handler(answers)
    with ScriptedServer(handler=handler, latency_s=latency_s, model=DEMO_MODEL) as server:
        settings = LLMSettings(base_url=server.base_url, api_key=None, model=DEMO_MODEL, max_retries=1)
        config = RunConfig(
            input_dir=Path(input_dir), output_dir=output_dir, logs_dir=logs_dir, settings=settings,
            workers=workers, force=True, doc_llm=False, task_ids=tuple(answers) if unanswered else None,
        )
        summary = run_batch_sync(config, progress=progress)
        requests = len(server.requests)
        base_url = server.base_url
    return DemoResult(summary, Path(input_dir), Path(gold_dir) if gold_dir is not None else None, output_dir,
                      logs_dir, base_url, requests, Path(answers_file) if answers_file is not None else None,
                      unanswered)


def own_answers(input_dir: Path, answers_file: Path) -> tuple[dict[str, ScriptedAnswer], tuple[str, ...]]:
    """The answers file's answers for the tasks of `input_dir` (each with its task's question), and
    the tasks it has no answer for. InputError when it names a task the input does not hold."""
    try:
        found = discover_tasks(input_dir)
    except DataError as exc:
        raise InputError(f"{exc}; give the folder that holds the task_* folders") from exc
    tasks = {t.task_id: t for t in found.tasks}
    answers = load_answers(answers_file)
    unknown = sorted(set(answers) - set(tasks))
    if unknown:
        listed = ", ".join(sorted(tasks)[:10]) + (f" … ({len(tasks)} in all)" if len(tasks) > 10 else "")
        raise InputError(f"the answers file {answers_file} names tasks {input_dir} does not hold: "
                         f"{', '.join(repr(t) for t in unknown[:10])}; its tasks: {listed or 'none'}")
    chosen = {task_id: dataclasses.replace(answer, question=tasks[task_id].question)
              for task_id, answer in answers.items()}
    return chosen, tuple(t for t in tasks if t not in chosen)
