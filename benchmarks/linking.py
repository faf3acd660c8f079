"""Question linking alone (data/linking.py), no model: on every task of dev and dev-en, the share
whose gold tables (the oracle's) are all in the linker's top 3, and whose gold filter values (the
string literals the oracle SQL compares a column with) the linker found in the data.

Each task is prepared as `datasolver run` prepares it (scratch copy, deterministic document
tables), its catalog opened, the value index built and the question linked.

    python benchmarks/linking.py [--sets dev,dev-en] [--top 3] [--show-misses] [--json out.json]

`--show-misses` lists the tasks that missed, except issue 31's held-out tasks (their questions are
not to be read while tuning; they count in the totals).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from datasolver.data import Catalog, load_task
from datasolver.data.linking import QuestionLinks, link_question, normalize
from datasolver.pipeline import prepare_task_documents
from datasolver.solver import prepare_scratch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_model import HELDOUT  # noqa: E402  (benchmarks/real_model.py, beside this script)

SHARED_TASKS = Path(__file__).resolve().parents[2] / "shared" / "tasks"


def gold_filter_values(sql: str) -> list[str]:
    """String literals compared with a column in the oracle SQL (=, <>, IN, LIKE; LIKE's % dropped)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return []
    values = []
    for node in tree.find_all(exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike):
        for literal in node.find_all(exp.Literal):
            if literal.is_string and literal.this.strip("%"):
                values.append(literal.this.strip("%"))
    return list(dict.fromkeys(values))


def gold_columns(sql: str) -> set[str]:
    """Column names the oracle SQL reads (normalized)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return set()
    return {normalize(column.name) for column in tree.find_all(exp.Column)}


def value_found(links: QuestionLinks, value: str) -> bool:
    key = normalize(value)
    return any(normalize(hit.value) == key or (key in normalize(hit.value)) for hit in links.values)


def measure(split: str, top: int, scratch: Path) -> list[dict[str, Any]]:
    rows = []
    oracle = [json.loads(line) for line in (SHARED_TASKS / split / "oracle.jsonl").read_text().splitlines() if line]
    for entry in oracle:
        task_dir = SHARED_TASKS / split / "input" / entry["task_id"]
        task = load_task(task_dir)
        layout = prepare_scratch(task, scratch / split)
        prepare_task_documents(layout, task=task, settings=None)
        started = time.process_time()
        with Catalog.open(layout.root, cache_dir=layout.cache) as catalog:
            index = catalog.value_index()
            knowledge = layout.context / "knowledge.md"
            text = knowledge.read_text(encoding="utf-8", errors="replace") if knowledge.is_file() else ""
            links = link_question(catalog, task.question, index, knowledge=text)
            seconds = time.process_time() - started
            resolved = []
            for name in entry["tables"]:
                try:
                    resolved.append(catalog.resolve(name))
                except Exception:  # the oracle names a table the catalog lists under another name
                    resolved.append(name)
        gold = set(resolved)
        filters = gold_filter_values(entry["sql"])
        rows.append({
            "split": split, "task": entry["task_id"], "gold_tables": sorted(gold), "top": links.top(top),
            "tables_in_top": gold <= set(links.top(top)), "filters": filters,
            "filters_found": [v for v in filters if value_found(links, v)],
            "lookalikes": list(links.lookalikes), "gold_folded": sorted(gold & set(links.lookalikes)),
            "column_parts": sorted({(c, run) for _, c, run in links.column_parts}),
            "column_parts_in_gold": sorted({c for _, c, _ in links.column_parts
                                            if normalize(c) in gold_columns(entry["sql"])}),
            "index_values": index.size, "cpu_s": round(seconds, 3), "question": task.question,
        })
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="dev,dev-en")
    parser.add_argument("--top", type=int, default=3)
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not SHARED_TASKS.is_dir():
        print(f"{SHARED_TASKS} is missing", file=sys.stderr)
        return 2
    all_rows = []
    with tempfile.TemporaryDirectory(prefix="linking-") as scratch:
        for split in args.sets.split(","):
            rows = measure(split, args.top, Path(scratch))
            all_rows += rows
            with_filters = [r for r in rows if r["filters"]]
            found = sum(len(r["filters_found"]) == len(r["filters"]) for r in with_filters)
            print(f"{split}: gold tables all in the top {args.top}: {sum(r['tables_in_top'] for r in rows)}/{len(rows)}"
                  f"; gold filter values all found: {found}/{len(with_filters)} tasks with string filters; "
                  f"a gold table among the look-alikes: {sum(bool(r['gold_folded']) for r in rows)}; "
                  f"CPU {sum(r['cpu_s'] for r in rows):.1f} s (index + linking), "
                  f"values indexed per task up to {max(r['index_values'] for r in rows)}")
            parts = [c for r in rows for c, _ in r["column_parts"]]
            print(f"  columns linked by a part of their name: {len(parts)} in "
                  f"{sum(bool(r['column_parts']) for r in rows)} tasks; read by the oracle SQL: "
                  f"{sum(len(r['column_parts_in_gold']) for r in rows)}")
            if args.show_misses:  # never the held-out tasks' questions: nobody reads those while tuning
                hidden = {task for _, task in HELDOUT}
                for r in rows:
                    if r["task"] in hidden:
                        continue
                    if not r["tables_in_top"] or len(r["filters_found"]) < len(r["filters"]) or r["gold_folded"]:
                        print(f"  {r['task']}: {r['question'][:90]}\n    gold {r['gold_tables']} top {r['top']}"
                              f" folded-gold {r['gold_folded']} filters {r['filters']} found {r['filters_found']}")
    total = len(all_rows)
    print(f"all: {sum(r['tables_in_top'] for r in all_rows)}/{total} "
          f"({100 * sum(r['tables_in_top'] for r in all_rows) / max(total, 1):.0f}%) with every gold table in the top {args.top}")
    if args.json:
        args.json.write_text(json.dumps(all_rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
