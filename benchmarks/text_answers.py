"""Text answers on the real-model benchmark (issue 35): the analyst beside a one-shot text answer.

  ask           `datasolver ask TASK --json --trace FILE` as a user runs it (MODEL_API_URL/KEY/NAME):
                the analyst's answer, whether a stored result backs it, what its answer checks did
  oneshot_text  the one-shot baseline's query (benchmarks/oneshot.py: one prompt, one query, up to 2
                repairs), its rows rendered as the answer (`oneshot.oneshot_rows`)

Each answer is scored two ways against the task's gold.csv:
- contains every gold value: each distinct non-empty gold cell, normalized as the official metric
  normalizes it (`eval.normalize.normalize_cell`: numbers to 2 places, dates ISO), is found in the answer, a
  number among the answer's numbers normalized the same way (so 0.3333 names a gold 0.33, and
  1,000,000 a gold 1000000; a stored result's name, `@1`, holds no number), a text cell as text (NFKC,
  case and spacing aside);
- the seed's Jaccard text score (`eval.score_text`) against the gold rows written out (cells joined
  by a space, rows by ", ").

Used by `benchmarks/real_model.py --harness ask,oneshot_text`.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

from datasolver.eval import score_text
from datasolver.eval.normalize import normalize_cell

TEXT_HARNESSES = ("ask", "oneshot_text")
ASK_GRACE_S = 30  # past the deadline before `datasolver ask` is killed (start-up, the documents pass)
MAX_GOLD_CELLS = 2_000
# A number as written in an answer (grouping commas only in strict groups of three) or an ISO-like date.
_DATE = re.compile(r"\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?")
_RESULT_NAME = re.compile(r"@\d+")  # `@1` names a stored result; its 1 is no value of the answer
_NUMBER = re.compile(r"(?<![\d.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])")


def run_ask(task_dir: Path, url: str, model: str, deadline_s: float, work: Path) -> dict[str, Any]:
    """One task's question through `datasolver ask --json`; its trace kept in `work`."""
    work.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "datasolver", "ask", str(task_dir), "--json", "--trace", str(work / "trace.jsonl")]
    env = {**os.environ, "MODEL_API_URL": url, "MODEL_API_KEY": "none", "MODEL_NAME": model,
           "DATASOLVER_DOC_CACHE": str(work.parent / "doc-cache")}
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=deadline_s + ASK_GRACE_S)
    except subprocess.TimeoutExpired:
        return {"answer": "", "status": f"killed after {deadline_s + ASK_GRACE_S:.0f} s", "backed": False}
    (work / "stderr.txt").write_text(done.stderr, encoding="utf-8")
    try:
        record = json.loads(done.stdout)
    except ValueError:
        return {"answer": "", "status": f"exit {done.returncode}: {done.stderr.strip()[-200:]}", "backed": False}
    (work / "record.json").write_text(json.dumps(record, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    if not record.get("ok"):
        return {"answer": "", "status": f"{record.get('error')}: {record.get('message', '')}"[:200], "backed": False}
    return {"answer": record.get("answer") or "", "status": record.get("stopped"),
            "backed": bool(record.get("backed_by_query")),
            "checks": [f"{c['check']} {c['action']}" for c in record.get("checks") or []],
            "path": record.get("path"),  # direct (one query, the answer written from its rows) or loop
            "confidence": record.get("confidence"),
            "own_usage": record.get("usage")}


def gold_rows(gold: Path) -> list[list[str]]:
    """gold.csv's rows (the header left out)."""
    with gold.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[1:]


def gold_values(rows: list[list[str]]) -> list[str]:
    """The distinct non-empty gold cells, normalized as the official metric normalizes them."""
    values = [normalize_cell(cell) for row in rows for cell in row][:MAX_GOLD_CELLS]
    return [v for v in dict.fromkeys(values) if v]


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def missing_values(answer: str, values: list[str]) -> list[str]:
    """The gold values the answer does not contain (see the module's doc)."""
    text = _RESULT_NAME.sub(" ", unicodedata.normalize("NFKC", answer or ""))
    written = {normalize_cell(m.group()) for m in _DATE.finditer(text)}
    written |= {normalize_cell(m.group()) for m in _NUMBER.finditer(_DATE.sub(" ", text))}
    folded = _fold(text)
    missing = []
    for value in values:
        if value in written:
            continue
        if not _is_number(value) and _fold(value) in folded:
            continue
        missing.append(value)
    return missing


def _is_number(value: str) -> bool:
    return re.fullmatch(r"-?\d+\.\d{2}", value) is not None


def reference_text(rows: list[list[str]]) -> str:
    """The gold rows written out as an answer: cells joined by a space, rows by ", "."""
    return ", ".join(" ".join(cell for cell in row if cell.strip()) for row in rows)


def score_answer(answer: str, gold: Path) -> dict[str, Any]:
    """Both scores of one text answer: every gold value contained (and which are missing), Jaccard."""
    rows = gold_rows(gold)
    missing = missing_values(answer, gold_values(rows))
    return {"contains_gold": bool(answer.strip()) and not missing, "missing": missing[:20],
            "jaccard": round(score_text(answer, reference_text(rows)), 4)}


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    """The text harnesses' tables: per task, and per harness in total."""
    mine = [r for r in rows if r["harness"] in TEXT_HARNESSES]
    if not mine:
        return []
    lines = ["", "| harness | task | every gold value | Jaccard | backed | requests | prompt + completion tokens | "
             "seconds | path, checks | answer |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in mine:
        answer = " ".join(str(r.get("answer", "")).split())
        answer = answer if len(answer) <= 60 else answer[:59] + "…"
        backed = {True: "yes", False: "no"}.get(r.get("backed"), "–")
        lines.append(f"| {r['harness']} | {r['task']} | {'yes' if r['contains_gold'] else 'no'} | {r['jaccard']:.2f} | "
                     f"{backed} | {r['requests']} | {r['prompt_tokens']:,} + {r['completion_tokens']:,} | "
                     f"{r['seconds']:.0f} | {', '.join(([r['path']] if r.get('path') else []) + (r.get('checks') or [])) or '–'} | {answer.replace('|', '/')} |")
    lines += ["", "| harness | tasks | every gold value | mean Jaccard | answered | requests | "
              "prompt + completion tokens | seconds |", "|---|---|---|---|---|---|---|---|"]
    for harness in TEXT_HARNESSES:
        theirs = [r for r in mine if r["harness"] == harness]
        if theirs:
            lines.append(
                f"| {harness} | {len(theirs)} | {sum(r['contains_gold'] for r in theirs)} | "
                f"{sum(r['jaccard'] for r in theirs) / len(theirs):.3f} | {sum(r['answered'] for r in theirs)} | "
                f"{sum(r['requests'] for r in theirs)} | {sum(r['prompt_tokens'] for r in theirs):,} + "
                f"{sum(r['completion_tokens'] for r in theirs):,} | {sum(r['seconds'] for r in theirs):.0f} |")
    return lines
