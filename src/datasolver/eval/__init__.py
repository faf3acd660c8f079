"""Scoring: the official DataAgent-Bench column-signature metric, run comparison, text answers.

Stdlib only, so the scorer can be trusted and run anywhere. See docs/eval.md.
"""

from __future__ import annotations

from datasolver.eval.compare import (
    BootstrapInterval,
    RunComparison,
    SeedSummary,
    compare_scores,
    paired_bootstrap,
    summarize_seeds,
)
from datasolver.eval.csvread import Table, read_strict_csv
from datasolver.eval.errors import CsvFormatError, EvalError, InvalidGold, InvalidRunFile, NoGoldTasks, NoSharedTasks, RaggedRow
from datasolver.eval.explain import ClosestColumn, ColumnReport
from datasolver.eval.normalize import normalize_cell
from datasolver.eval.runs import EvalReport, TaskResult, evaluate_dir, find_gold, load_report
from datasolver.eval.score import (
    DEFAULT_PENALTY,
    TaskScore,
    match_columns,
    prediction_signature,
    score_files,
    score_tables,
)
from datasolver.eval.text import answer_tokens, score_text

__all__ = [
    "DEFAULT_PENALTY",
    "BootstrapInterval",
    "ClosestColumn",
    "ColumnReport",
    "CsvFormatError",
    "EvalError",
    "NoSharedTasks",
    "EvalReport",
    "InvalidGold",
    "InvalidRunFile",
    "NoGoldTasks",
    "RaggedRow",
    "RunComparison",
    "SeedSummary",
    "Table",
    "TaskResult",
    "TaskScore",
    "answer_tokens",
    "compare_scores",
    "evaluate_dir",
    "find_gold",
    "load_report",
    "match_columns",
    "normalize_cell",
    "paired_bootstrap",
    "prediction_signature",
    "read_strict_csv",
    "score_files",
    "score_tables",
    "score_text",
    "summarize_seeds",
]
