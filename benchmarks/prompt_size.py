"""First-prompt size: the compact prompt vs a plain "describe every table in full" baseline.

For every task of the dev sets (../shared/tasks/dev, Chinese, and ../shared/tasks/dev-en, English
BIRD-style knowledge.md; `--set` picks one, `--tasks` any folder) this prepares a scratch copy (deterministic
document tables, no model), gathers the agent's brief and fits it to the prompt budget exactly as
`solve_task` does without votes (word-overlap relevance), then counts with the agent's own token
estimate (`datasolver.agent.tokens.estimate_tokens`), rules excluded on both sides:

- prompt: the first user message the agent sends (knowledge, files, tables, question);
- baseline: knowledge.md + every table's full engine profile (`TableProfile.render`, one line per
  column: type, nullable, distinct, range, example) + the question;
- tables: the compact table section vs the full profiles alone (without the knowledge.md column
  meanings that the prompt puts at the end of column lines; those are counted on their own);
- needed named: every table the oracle's gold SQL reads (oracle.jsonl) appears by its canonical
  name in the prompt, and every column of those tables that the SQL names appears as a word.

Last, the rules (system message) and the tool schemas, the same for every task, are counted once.

    python benchmarks/prompt_size.py [--set dev|dev-en | --tasks DIR] [--budget 10000] [--limit N]

A smaller --budget shows relevance folding (least relevant schema groups become one line each).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import sqlglot
from sqlglot import exp

from datasolver.agent import Limits
from datasolver.agent.assemble import build_user_prompt
from datasolver.agent.brief import gather_brief
from datasolver.agent.fit import first_prompt_tokens, fit_brief
from datasolver.agent.tokens import estimate_tokens
from datasolver.agent.assemble import build_system_prompt
from datasolver.agent.tokens import estimate_tools_tokens
from datasolver.agent.knowledge import merge_knowledge
from datasolver.data import Catalog, ScratchLayout, profile_table
from datasolver.documents import prepare_documents
from datasolver.solver import tool_schemas
from datasolver.solver.prepare import prepare_task

SETS = Path(__file__).resolve().parents[1] / ".." / "shared" / "tasks"
SET_NAMES = ("dev", "dev-en")


def needed_columns(sql: str, catalog: Catalog, tables: list[str]) -> list[str]:
    """The columns of `tables` that `sql` names (as the catalog spells them); aliases are no columns."""
    try:
        named = {c.name.lower() for c in sqlglot.parse_one(sql, read="duckdb").find_all(exp.Column)}
    except sqlglot.errors.ParseError:
        return []
    real = {c.lower(): c for t in tables for c in catalog.column_names(catalog.resolve(t)) or []}
    return sorted({real[n] for n in named if n in real})


def measure(task_dir: Path, scratch_root: Path, budget: int, needed: list[str], sql: str = "") -> dict:
    scratch = prepare_task(task_dir, scratch_root)
    prepare_documents(scratch)
    with Catalog.open(scratch, cache_dir=scratch / "tmp") as catalog:
        brief = fit_brief(gather_brief(ScratchLayout.of(scratch), catalog, Limits(prompt_budget=budget)), budget)
        prompt = build_user_prompt(brief)
        full = "\n\n".join(profile_table(catalog, info.name).render() for info in catalog.tables())
        baseline = "\n\n".join([brief.knowledge, full, brief.question])
        missing = [n for n in needed if catalog.resolve(n) not in prompt]
        columns = needed_columns(sql, catalog, needed) if sql else []
        missing += [f"column {c}" for c in columns if not re.search(rf"(?<!\w){re.escape(c)}(?!\w)", prompt)]
        merged = merge_knowledge(brief.knowledge, brief.digest, brief.folded)
        with_notes = (brief.digest.render(brief.folded, merged.notes) + merged.join_text()
                      if brief.digest is not None else brief.tables)
    return {
        "task_id": brief.task_id, "tables": len(brief.digest.entries) if brief.digest else 0,
        "folded": len(brief.folded), "prompt": first_prompt_tokens(brief), "baseline": estimate_tokens(baseline),
        "table_text": estimate_tokens(brief.tables), "full_profiles": estimate_tokens(full),
        "knowledge": estimate_tokens(brief.knowledge), "needed": len(needed) + len(columns), "missing": missing,
        "meanings": estimate_tokens(with_notes) - estimate_tokens(brief.tables),
    }


def run_set(tasks: Path, budget: int, limit: int | None) -> dict:
    """Measure every task of one set; print a line per task and the set's totals."""
    inputs = tasks / "input"
    if not inputs.is_dir():
        sys.exit(f"no tasks at {inputs} (the dev sets live in ../shared/tasks/dev and dev-en)")
    oracle = {}
    if (tasks / "oracle.jsonl").is_file():
        for line in (tasks / "oracle.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            oracle[record["task_id"]] = record
    rows = []
    with tempfile.TemporaryDirectory() as scratch_root:
        for task_dir in sorted(p for p in inputs.iterdir() if p.is_dir())[:limit]:
            record = oracle.get(task_dir.name, {})
            rows.append(measure(task_dir, Path(scratch_root), budget, list(record.get("tables", {})),
                                record.get("sql", "")))
            r = rows[-1]
            print(f"{r['task_id']:<24} tables {r['tables']:>3} folded {r['folded']:>3}  prompt {r['prompt']:>6} "
                  f"baseline {r['baseline']:>6}  {r['prompt'] / r['baseline']:.2f}x   table text {r['table_text']:>5} "
                  f"full profiles {r['full_profiles']:>5}  {r['table_text'] / r['full_profiles']:.2f}x   "
                  f"needed named {r['needed'] - len(r['missing'])}/{r['needed']}", flush=True)
    total = {k: sum(r[k] for r in rows)
             for k in ("prompt", "baseline", "table_text", "full_profiles", "knowledge", "meanings")}
    needed = sum(r["needed"] for r in rows)
    missing = [f"{r['task_id']}:{m}" for r in rows for m in r["missing"]]
    print(f"\n{tasks.name}: {len(rows)} tasks, budget {budget} tokens")
    print(f"first prompt / baseline: {total['prompt']} / {total['baseline']} = "
          f"{total['prompt'] / total['baseline']:.3f}x")
    print(f"table text / full profiles: {total['table_text']} / {total['full_profiles']} = "
          f"{total['table_text'] / total['full_profiles']:.2f}x")
    print(f"knowledge.md (verbatim in the baseline): {total['knowledge']} tokens = "
          f"{total['knowledge'] / total['baseline']:.0%} of the baseline; its column meanings and join keys on "
          f"the prompt's table section: {total['meanings']} tokens")
    print(f"largest prompt: {max(r['prompt'] for r in rows)} tokens")
    print(f"needed tables and columns named: {needed - len(missing)}/{needed}"
          + (f"  MISSING {missing}" if missing else ""), flush=True)
    return {"set": tasks.name, "ratio": total["prompt"] / total["baseline"], "needed": needed,
            "missing": len(missing)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=SET_NAMES, action="append", dest="sets",
                        help="a dev set under ../shared/tasks (repeatable; default: both)")
    parser.add_argument("--tasks", type=Path, default=None, help="any task folder with input/ (instead of --set)")
    parser.add_argument("--budget", type=int, default=Limits().prompt_budget)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    folders = [args.tasks] if args.tasks else [SETS / name for name in (args.sets or SET_NAMES)]
    results = [run_set(folder, args.budget, args.limit) for folder in folders]
    print(f"\nthe same for every task (not counted above): rules {estimate_tokens(build_system_prompt(Limits()))} "
          f"tokens, tool schemas {estimate_tools_tokens(tool_schemas())} tokens")
    if len(results) > 1:
        print("\n" + "   ".join(f"{r['set']}: {r['ratio']:.3f}x, named {r['needed'] - r['missing']}/{r['needed']}"
                                 for r in results))


if __name__ == "__main__":
    main()
