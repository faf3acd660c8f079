"""Which dev tasks the pipeline tests must run so that the whole set adds no code path: each
task's pipeline run alone, under coverage (lines and branches of `src/datasolver`, in-process:
the loader, documents, agent, tools, answer checks, publish; the sandboxed solver.py runs are
not traced), then a greedy cover of the union of every task's arcs.

    pip install coverage
    python benchmarks/dev_sample.py [--set dev-en] [--mode oracle|text] [--tasks ID,ID]

`--mode oracle` is tests/test_pipeline_dev_oracle.py's model (each task's oracle SQL through the
real tools); `--mode text` is tests/test_pipeline_dev_text_server.py's (calls written as text in
two forms, prose first, a 6,144-token window it does not report). One process, the scripted model
at the client's transport; one task run first and discarded, so what happens once per process
(imports, first-use caches) belongs to no task. Prints the cover in the order chosen, with the
arcs each task adds, and the arcs the rest of the set would add (0 by construction).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import coverage

from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedModel, text_writer
from datasolver.llm.fake.text_writer import FENCED_JSON, HERMES
from datasolver.pipeline import RunConfig, run_batch_sync

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: its tests' helpers
from tests.helpers.devsets import oracle, task_set  # noqa: E402

TEXT_WINDOW = 6144  # tests/test_pipeline_dev_text_server.py's


def model_for(mode: str, answers: dict[str, ScriptedAnswer]) -> ScriptedModel:
    if mode == "oracle":
        return ScriptedModel(handler=solver_handler(answers))
    by_question = sorted(((a.question, task_id) for task_id, a in answers.items()), key=lambda kv: -len(kv[0]))

    def task_of(request: dict) -> str:
        for message in request.get("messages") or []:
            content = message.get("content") if isinstance(message.get("content"), str) else ""
            for question, task_id in by_question:
                if question in content:
                    return task_id
        return "?"

    handler = text_writer(solver_handler(answers), forms=(HERMES, FENCED_JSON), prose_first=True,
                          conversation_key=task_of)
    return ScriptedModel(handler=handler, context_window=TEXT_WINDOW)


def run_one(root: Path, task_id: str, mode: str, answers: dict[str, ScriptedAnswer], work: Path) -> bool:
    """The pipeline on one task, as the dev-set tests run it; whether it was solved."""
    shutil.rmtree(work, ignore_errors=True)
    model = model_for(mode, answers)
    settings = LLMSettings(**model.connection(), api_key="k", model=mode)
    summary = run_batch_sync(RunConfig(input_dir=root / "input", output_dir=work / "out", logs_dir=work / "logs",
                                       settings=settings, workers=1, doc_llm=False, task_ids=(task_id,)))
    return summary.counts()["solved"] == 1


def arcs_of(cov: coverage.Coverage) -> set[tuple[str, int, int]]:
    data = cov.get_data()
    return {(name, *arc) for name in data.measured_files() for arc in (data.arcs(name) or [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="dev-en", help="dev or dev-en (../shared/tasks/<set>)")
    parser.add_argument("--mode", choices=("oracle", "text"), default="oracle")
    parser.add_argument("--tasks", help="only these task ids, comma-separated")
    parser.add_argument("--show", type=int, default=10,
                        help="list the code a task adds when it adds at most this many arcs (default 10)")
    args = parser.parse_args()
    root = task_set(args.set)
    answers = {r["task_id"]: ScriptedAnswer(r["task_id"], r["sql"], r["question"]) for r in oracle(root)}
    task_ids = args.tasks.split(",") if args.tasks else sorted(answers)
    package = str(Path(__import__("datasolver").__file__).parent)
    per_task: dict[str, set[tuple[str, int, int]]] = {}
    with tempfile.TemporaryDirectory(prefix="dev-sample-") as folder:
        work = Path(folder) / "run"
        run_one(root, task_ids[0], args.mode, answers, work)  # once-per-process work belongs to no task
        for task_id in task_ids:
            cov = coverage.Coverage(branch=True, source=[package], data_file=None)
            started = time.monotonic()
            cov.start()
            try:
                solved = run_one(root, task_id, args.mode, answers, work)
            finally:
                cov.stop()
            per_task[task_id] = arcs_of(cov)
            print(f"{task_id}: {len(per_task[task_id])} arcs, {'solved' if solved else 'NOT SOLVED'}, "
                  f"{time.monotonic() - started:.1f} s", flush=True)
    union = set().union(*per_task.values())
    covered: set[tuple[str, int, int]] = set()
    chosen: list[tuple[str, int]] = []
    while covered != union:
        best = max(sorted(per_task), key=lambda t: len(per_task[t] - covered))
        chosen.append((best, len(per_task[best] - covered)))
        covered |= per_task[best]
    print(f"\n{args.set}, {args.mode}: {len(union)} arcs in all; {len(chosen)} tasks cover them:")
    covered = set()
    for task_id, added in chosen:
        new = per_task[task_id] - covered
        covered |= per_task[task_id]
        where = sorted({f"{Path(name).relative_to(package)}:{max(a, b)}" for name, a, b in new})
        print(f"  {task_id}: +{added}" + (f"  ({', '.join(where)})" if added <= args.show else ""))
    print("  (" + ", ".join(f'"{t}"' for t, _ in chosen) + ")")


if __name__ == "__main__":
    main()
