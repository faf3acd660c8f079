"""Answer checks, send-back and voting on the dev tasks: what they catch, what they cost.

Measured in one run of this script, on one machine (report ratios, not absolute times):

  false positives  every dev task's oracle SQL (and every bundled example's SQL) through
                   run_solver: failed checks on right answers (goal 0). `ties_cut` informs only
                   and is counted apart.
  mistakes         a fallible scripted model makes one mistake per dev task (tests/helpers/mistakes.py,
                   rotating through the checks) and fixes it only when a message names its check.
                   The whole pipeline runs twice, with the checks and with them off; the share of
                   tasks ending at score 1.0 is compared. Stubborn (send-back) on every other task.
  voting           `--votes 3` with a model that answers right every time: solves and requests
                   per task vs a single solve (goal: 2 solves, about twice the requests).
  cost             a 1M-row CSV task: run_solver's run vs what follows it (the self-check's read of
                   prediction.csv and the answer checks), for an aggregate, a 1M-row raw answer, an
                   empty result (re-runs per filter) and a LIMIT cut (tie check), with a warm
                   catalog as the agent has it; "sampled" (Arrow reads a large file, the checks
                   see its first SAMPLE_ROWS rows) next to "whole" (every row read, hashed and
                   checked in Python, the way before sampling).

    python benchmarks/answer_checks.py [--dev ../shared/tasks/dev] [--tasks 40] [--work benchmarks/_work]
                                       [--vote-tasks 40] [--skip cost,voting]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from pathlib import Path

from datasolver import examples
from datasolver.agent import Limits
from datasolver.data import Catalog, ScratchLayout, load_task
from datasolver.eval import evaluate_dir
from datasolver.examples import solver_handler
from datasolver.examples.scripted import ScriptedAnswer
from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline import RunConfig, VotePolicy, run_batch_sync
from datasolver.sandbox import SandboxLimits
from datasolver.solver import SolverToolbox, prepare_scratch, restore_scaffold, write_scaffold
from datasolver.solver.prepare import prepare_task
from datasolver.solver.runner import run_solver_script
from datasolver.solver.answer_checks import check_answer
from datasolver.solver import prediction_check
from datasolver.solver.prediction_check import check_prediction
from datasolver.solver.scaffold import query_code

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: its tests' helpers
from tests.helpers.mistakes import mistake_for, right_answer  # noqa: E402
from tests.helpers.solver import set_query  # noqa: E402


def oracle_answers(dev: Path, limit: int) -> list[dict]:
    rows = [json.loads(line) for line in (dev / "oracle.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit]


def prepared(task_dir: Path, scratch_root: Path, documents: bool) -> ScratchLayout:
    scratch = prepare_scratch(task_dir, scratch_root)
    if documents:
        from datasolver.documents import prepare_documents

        prepare_documents(scratch)
        write_scaffold(scratch)
    return scratch


def false_positives(dev: Path, entries: list[dict], work: Path) -> dict:
    """Every oracle answer through run_solver; the checks it raises."""
    cases = [(dev / "input" / e["task_id"], e["sql"], any(t.get("format") == "doc" for t in e["tables"].values()))
             for e in entries]
    demo = examples.demo_answers()
    cases += [(examples.input_dir() / task_id, a.sql, True) for task_id, a in demo.items()]  # a Markdown table
    found: dict[str, list[str]] = {}
    not_ok: dict[str, str] = {}
    for task_dir, sql, documents in cases:
        scratch = prepared(task_dir, work / "fp", documents)
        with SolverToolbox(scratch) as toolbox:
            set_query(toolbox, query_code(sql))
            result = toolbox.call("run_solver", {})
        if not result.ok:
            not_ok[task_dir.name] = " ".join(result.text.splitlines()[:2])
        elif result.value is not None and result.value.names:
            found[task_dir.name] = list(result.value.names)
    blocking = {k: [c for c in v if c != "ties_cut"] for k, v in found.items()}
    return {"answers": len(cases), "dev": len(entries), "examples": len(demo),
            "false_positives": sum(len(v) for v in blocking.values()),
            "ties_cut_informs": sum(v.count("ties_cut") for v in found.values()), "runs_not_ok": len(not_ok),
            "by_task": found, "not_ok": not_ok}


def mistake_answers(dev: Path, entries: list[dict], work: Path) -> tuple[dict[str, ScriptedAnswer], dict[str, str]]:
    answers, made = {}, {}
    for index, entry in enumerate(entries):
        documents = any(t.get("format") == "doc" for t in entry["tables"].values())
        scratch = prepared(dev / "input" / entry["task_id"], work / "mk", documents)
        with Catalog.open(scratch.root) as catalog:
            right = right_answer(catalog, entry["question"], entry["sql"])
        mistake = mistake_for(right, index)
        answer = ScriptedAnswer(entry["task_id"], entry["sql"], entry["question"])
        if mistake is not None:
            answer = answer.with_mistake(mistake[0], mistake[1], stubborn=index % 2 == 1)
            made[entry["task_id"]] = mistake[0]
        answers[entry["task_id"]] = answer
    return answers, made


def run_pipeline(dev: Path, answers: dict[str, ScriptedAnswer], out: Path, *, checks: bool,
                 votes: int = 1) -> tuple[dict, float, int]:
    shutil.rmtree(out, ignore_errors=True)
    with ScriptedServer(handler=solver_handler(answers)) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="bench", model="fallible", initial_backoff=0.0)
        config = RunConfig(input_dir=dev / "input", output_dir=out / "pred", logs_dir=out / "logs",
                           settings=settings, workers=4, task_ids=tuple(answers), doc_llm=False,
                           limits=Limits(answer_checks=checks), votes=VotePolicy(votes))
        started = time.monotonic()
        summary = run_batch_sync(config)
        seconds = time.monotonic() - started
        requests = len(server.requests)
    report = evaluate_dir(out / "pred", dev / "output", explain=False)
    scores = {t.task_id: t.score for t in report.tasks if t.task_id in answers}
    records = {r.task_id: r for r in summary.tasks}
    return {"scores": scores, "records": records}, seconds, requests


def cost(work: Path, rows: int = 1_000_000) -> dict:
    """run_solver's sandboxed run vs the answer checks on its result, on a `rows`-row CSV."""
    task = work / "cost_in" / "task_cost"
    shutil.rmtree(task.parent, ignore_errors=True)
    (task / "context" / "csv").mkdir(parents=True)
    (task / "task.json").write_text(json.dumps({"task_id": "task_cost", "question": "Which shop sells most?"}),
                                    encoding="utf-8")
    with open(task / "context" / "csv" / "sales.csv", "w", encoding="utf-8") as handle:
        handle.write("id,amount,shop,city\n")
        for k in range(rows):
            handle.write(f"{k},{(k * 7919) % 1000 / 10},shop{k % 50},{'city' + str(k % 7)}\n")
    the_task = load_task(task)
    scratch = prepare_scratch(the_task, work / "cost_scratch")
    queries = {
        "aggregate": "SELECT shop, sum(amount) AS total FROM sales GROUP BY shop ORDER BY shop",
        "raw_1M_rows": "SELECT id, amount, shop FROM sales",
        "empty_result": "SELECT id FROM sales WHERE city = 'City3' AND amount > 10 AND shop = 'shop1'",
        "limit_tie": "SELECT shop FROM sales ORDER BY amount DESC LIMIT 1",
    }
    out = {}
    with Catalog.open(scratch.root, cache_dir=scratch.tmp) as catalog:
        catalog.query("SELECT count(*) FROM sales")  # warm, as after exploring
        for name, sql in queries.items():
            with SolverToolbox(scratch, catalog=catalog, task=the_task) as toolbox:
                set_query(toolbox, query_code(sql))
            started = time.perf_counter()
            run = run_solver_script(scratch, SandboxLimits(timeout_s=600))
            run_s = time.perf_counter() - started
            out[name] = {"run_s": round(run_s, 3)}
            # Untimed once: the first check of a process pays sqlglot's and the query's warm-up,
            # which would otherwise fall on whichever way is timed first.
            check_answer(scratch, the_task.question,
                         check_prediction(run.prediction, answer_checked=True), catalog)
            for way, read_all in (("sampled", False), ("whole", True)):
                # What run_solver does after the run: read prediction.csv (self-check) and check it.
                # "whole" is the way before sampling: every row read in Python, hashed, kept.
                times = []
                for _ in range(3):  # the median of three: one slow moment of a shared machine is not the cost
                    with _reading_everything(read_all):
                        started = time.perf_counter()
                        prediction = check_prediction(run.prediction, answer_checked=not read_all)
                        report = check_answer(scratch, the_task.question, prediction, catalog)
                        times.append(time.perf_counter() - started)
                check_s = sorted(times)[1]
                out[name][way] = {"checks_s": round(check_s, 3), "ratio": round(check_s / run_s, 4),
                                  "checks": report.names}
            restore_scaffold(scratch)
    return out


@contextlib.contextmanager
def _reading_everything(on: bool):
    """The read before sampling: no Arrow bulk read, every row kept for the checks."""
    saved = prediction_check.BULK_BYTES, prediction_check.SAMPLE_ROWS
    if on:
        prediction_check.BULK_BYTES = prediction_check.SAMPLE_ROWS = 1 << 62
    try:
        yield
    finally:
        prediction_check.BULK_BYTES, prediction_check.SAMPLE_ROWS = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "tasks" / "dev")
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--vote-tasks", type=int, default=40, help="dev tasks for the voting measurement")
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work" / "answer_checks")
    parser.add_argument("--skip", default="", help="comma-separated: false_positives,mistakes,voting,cost")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    result: dict = {}
    have_dev = (args.dev / "oracle.jsonl").is_file()
    entries = oracle_answers(args.dev, args.tasks) if have_dev else []
    if have_dev and "false_positives" not in skip:
        result["false_positives"] = false_positives(args.dev, entries, args.work)
        print("false positives:", json.dumps({k: v for k, v in result["false_positives"].items() if k != "by_task"}),
              result["false_positives"]["by_task"], flush=True)
    if have_dev and "mistakes" not in skip:
        answers, made = mistake_answers(args.dev, entries, args.work)
        runs = {}
        for checks in (True, False):
            run, seconds, requests = run_pipeline(args.dev, answers, args.work / f"mistakes_{checks}", checks=checks)
            at_one = sum(1 for s in run["scores"].values() if s == 1.0)
            runs["with_checks" if checks else "without_checks"] = {
                "tasks": len(run["scores"]), "at_1.0": at_one, "share_at_1.0": round(at_one / len(run["scores"]), 3),
                "mean": round(sum(run["scores"].values()) / len(run["scores"]), 4), "requests": requests,
                "seconds": round(seconds, 1),
                "not_at_1.0": {t: made.get(t) for t, s in run["scores"].items() if s != 1.0},
            }
        counts: dict[str, int] = {}
        for name in made.values():
            counts[name] = counts.get(name, 0) + 1
        result["mistakes"] = {"mistakes_made": counts, "tasks_without_a_mistake": len(entries) - len(made), **runs}
        print("mistakes:", json.dumps(result["mistakes"], ensure_ascii=False), flush=True)
    if have_dev and "voting" not in skip:
        right = {e["task_id"]: ScriptedAnswer(e["task_id"], e["sql"], e["question"]) for e in entries[:args.vote_tasks]}
        single, _, single_requests = run_pipeline(args.dev, right, args.work / "votes_1", checks=True)
        voted, _, voted_requests = run_pipeline(args.dev, right, args.work / "votes_3", checks=True, votes=3)
        solves = [len(r.vote["solves"]) for r in voted["records"].values() if r.vote]
        result["voting"] = {
            "tasks": len(right), "requests_single": single_requests, "requests_votes_3": voted_requests,
            "request_ratio": round(voted_requests / single_requests, 3),
            "mean_solves": round(sum(solves) / len(solves), 3), "max_solves": max(solves),
            "at_1.0_single": sum(1 for s in single["scores"].values() if s == 1.0),
            "at_1.0_votes_3": sum(1 for s in voted["scores"].values() if s == 1.0),
        }
        print("voting:", json.dumps(result["voting"]), flush=True)
    if "cost" not in skip:
        result["cost"] = cost(args.work)
        print("cost:", json.dumps(result["cost"]), flush=True)
    (args.work / "result.json").write_text(json.dumps(result, ensure_ascii=False, indent=2, default=str),
                                           encoding="utf-8")


if __name__ == "__main__":
    main()
