"""Scoring: the official DataAgent-Bench column-signature metric, run comparison, text answers.

Stdlib only, so the scorer can be trusted and run anywhere. See docs/eval.md.
"""

from __future__ import annotations

from datasolver.eval.compare import RunComparison, SeedSummary, compare_scores, paired_bootstrap, summarize_seeds
from datasolver.eval.csvread import read_strict_csv
from datasolver.eval.errors import EvalError
from datasolver.eval.runs import EvalReport, evaluate_dir, find_gold, load_report
from datasolver.eval.score import DEFAULT_PENALTY, prediction_signature, score_files
from datasolver.eval.text import score_text

__all__ = [
    "DEFAULT_PENALTY",
    "EvalError",
    "EvalReport",
    "RunComparison",
    "SeedSummary",
    "compare_scores",
    "evaluate_dir",
    "find_gold",
    "load_report",
    "paired_bootstrap",
    "prediction_signature",
    "read_strict_csv",
    "score_files",
    "score_text",
    "summarize_seeds",
]
