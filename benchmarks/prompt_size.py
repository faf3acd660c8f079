"""First-prompt size: the compact prompt vs a plain "describe every table in full" baseline.

For every dev task (default ../shared/tasks/dev) this prepares a scratch copy (deterministic
document tables, no model), gathers the agent's brief and fits it to the prompt budget exactly as
`solve_task` does without votes (word-overlap relevance), then counts with the agent's own token
estimate (`datasolver.agent.estimate_tokens`), rules excluded on both sides:

- prompt: the first user message the agent sends (knowledge, files, tables, question);
- baseline: knowledge.md + every table's full engine profile (`TableProfile.render`, one line per
  column: type, nullable, distinct, range, example) + the question;
- tables: the compact table section vs the full profiles alone (without the knowledge.md column
  meanings that the prompt puts at the end of column lines; those are counted on their own);
- needed named: every table the oracle's gold SQL reads (oracle.jsonl) appears by its canonical
  name in the prompt.

Last, the rules (system message) and the tool schemas, the same for every task, are counted once.

    python benchmarks/prompt_size.py [--tasks ../shared/tasks/dev] [--budget 10000] [--limit N]

A smaller --budget shows relevance folding (least relevant schema groups become one line each).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from datasolver.agent import Limits, build_user_prompt, estimate_tokens, first_prompt_tokens, fit_brief, gather_brief
from datasolver.agent.assemble import build_system_prompt
from datasolver.agent.tokens import estimate_tools_tokens
from datasolver.agent.knowledge import merge_knowledge
from datasolver.data import Catalog, profile_table
from datasolver.documents import prepare_documents
from datasolver.solver import prepare_task, tool_schemas

DEFAULT_TASKS = Path(__file__).resolve().parents[1] / ".." / "shared" / "tasks" / "dev"


def measure(task_dir: Path, scratch_root: Path, budget: int, needed: list[str]) -> dict:
    scratch = prepare_task(task_dir, scratch_root)
    prepare_documents(scratch)
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        brief = fit_brief(gather_brief(scratch, catalog, Limits(prompt_budget=budget)), budget)
        prompt = build_user_prompt(brief)
        full = "\n\n".join(profile_table(catalog, info.name).render() for info in catalog.tables())
        baseline = "\n\n".join([brief.knowledge, full, brief.question])
        missing = [n for n in needed if catalog.resolve(n) not in prompt]
        notes = merge_knowledge(brief.knowledge, brief.digest, brief.folded).notes
        with_notes = brief.digest.render(brief.folded, notes) if brief.digest is not None else brief.tables
    return {
        "task_id": brief.task_id, "tables": len(brief.digest.entries) if brief.digest else 0,
        "folded": len(brief.folded), "prompt": first_prompt_tokens(brief), "baseline": estimate_tokens(baseline),
        "table_text": estimate_tokens(brief.tables), "full_profiles": estimate_tokens(full),
        "knowledge": estimate_tokens(brief.knowledge), "needed": len(needed), "missing": missing,
        "meanings": estimate_tokens(with_notes) - estimate_tokens(brief.tables),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=DEFAULT_TASKS)
    parser.add_argument("--budget", type=int, default=Limits().prompt_budget)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    inputs = args.tasks / "input"
    if not inputs.is_dir():
        sys.exit(f"no tasks at {inputs} (the dev tasks live in ../shared/tasks/dev)")
    oracle = {}
    if (args.tasks / "oracle.jsonl").is_file():
        for line in (args.tasks / "oracle.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            oracle[record["task_id"]] = list(record.get("tables", {}))
    rows = []
    with tempfile.TemporaryDirectory() as scratch_root:
        for task_dir in sorted(p for p in inputs.iterdir() if p.is_dir())[: args.limit]:
            rows.append(measure(task_dir, Path(scratch_root), args.budget, oracle.get(task_dir.name, [])))
            r = rows[-1]
            print(f"{r['task_id']:<20} tables {r['tables']:>3} folded {r['folded']:>3}  prompt {r['prompt']:>6} "
                  f"baseline {r['baseline']:>6}  {r['prompt'] / r['baseline']:.2f}x   table text {r['table_text']:>5} "
                  f"full profiles {r['full_profiles']:>5}  {r['table_text'] / r['full_profiles']:.2f}x   "
                  f"needed named {r['needed'] - len(r['missing'])}/{r['needed']}", flush=True)
    total = {k: sum(r[k] for r in rows)
             for k in ("prompt", "baseline", "table_text", "full_profiles", "knowledge", "meanings")}
    needed = sum(r["needed"] for r in rows)
    missing = [f"{r['task_id']}:{m}" for r in rows for m in r["missing"]]
    print(f"\n{len(rows)} tasks, budget {args.budget} tokens")
    print(f"first prompt / baseline: {total['prompt']} / {total['baseline']} = {total['prompt'] / total['baseline']:.2f}x")
    print(f"table text / full profiles: {total['table_text']} / {total['full_profiles']} = "
          f"{total['table_text'] / total['full_profiles']:.2f}x")
    print(f"knowledge.md (verbatim in the baseline): {total['knowledge']} tokens = "
          f"{total['knowledge'] / total['baseline']:.0%} of the baseline; its column meanings on the prompt's "
          f"column lines: {total['meanings']} tokens")
    print(f"largest prompt: {max(r['prompt'] for r in rows)} tokens")
    print(f"needed tables named: {needed - len(missing)}/{needed}" + (f"  MISSING {missing}" if missing else ""))
    print(f"the same for every task (not counted above): rules {estimate_tokens(build_system_prompt(Limits()))} "
          f"tokens, tool schemas {estimate_tools_tokens(tool_schemas())} tokens")


if __name__ == "__main__":
    main()
