"""What an answer check sees (the answer and where it came from) and what it reports."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from datasolver.solver.answer_checks.sqlshape import ParsedSql, parse_sql
from datasolver.solver.checks import is_null

if TYPE_CHECKING:
    from datasolver.data import Catalog

CHECK_NAMES = (
    "helper_column",
    "constant_column",
    "duplicate_rows",
    "empty_result",
    "all_null_column",
    "ties_cut",
    "literal_answer",
    "text_numbers",
    "early_rounding",
    "range_rows",
    "both_of_two",
    "ratio_count",
)
INFORMS_ONLY = frozenset({"ties_cut"})
"""Checks that describe a choice the question decides; they never send the model back."""

CHECK_LINE = re.compile(r"^CHECK (\w+): ", re.MULTILINE)


@dataclass(frozen=True)
class CheckFinding:
    """One failed check: its name (one of CHECK_NAMES) and what is wrong and what to do."""

    name: str
    message: str

    def __post_init__(self) -> None:
        if self.name not in CHECK_NAMES:
            raise ValueError(f"unknown check name {self.name!r}")

    @property
    def informs_only(self) -> bool:
        return self.name in INFORMS_ONLY

    def line(self) -> str:
        return f"CHECK {self.name}: {self.message}"


def check_names_in(text: str) -> list[str]:
    """The names of the CHECK lines in a tool result, in order (how logs and tests count them)."""
    return [m.group(1) for m in CHECK_LINE.finditer(text) if m.group(1) in CHECK_NAMES]


@dataclass
class AnswerContext:
    """One OK run: the question, solver.py, the SQL run_sql executed, the prediction as scored.

    `rows` may be the first rows of a larger answer (a sample): `total_rows` then says how many
    there are, and `non_null` (per column, over all rows) keeps the NULL checks exact.
    """

    question: str
    code: str
    queries: list[str]
    columns: list[str]
    rows: list[list[str]]
    catalog: Catalog | None = None
    notes: list[str] = field(default_factory=list)  # why a check could not run (traced, not shown)
    total_rows: int | None = None
    non_null: list[int] | None = None

    @property
    def n_rows(self) -> int:
        return self.total_rows if self.total_rows is not None else len(self.rows)

    @property
    def sampled(self) -> bool:
        return self.n_rows > len(self.rows)

    def sample_note(self, what: str = "counted") -> str:
        """" ({what} in the first N of M rows: a sample)" when `rows` is a sample, else ""."""
        if not self.sampled:
            return ""
        return f" ({what} in the first {len(self.rows):,} of {self.n_rows:,} rows: a sample)"

    def null_columns(self) -> list[int]:
        """Columns NULL in every row (from `non_null` when known)."""
        if not self.n_rows:
            return []
        if self.non_null is not None:
            return [i for i, count in enumerate(self.non_null) if count == 0]
        return [i for i in range(len(self.columns)) if all(is_null(v) for v in self.cells(i))]

    def every_cell_null(self) -> bool:
        """At least one row, and every cell of every row is NULL."""
        return bool(self.n_rows) and bool(self.columns) and len(self.null_columns()) == len(self.columns)

    @property
    def final_sql(self) -> str | None:
        """The query whose result became the answer: the last one run_sql executed."""
        return self.queries[-1] if self.queries else None

    @cached_property
    def parsed(self) -> ParsedSql | None:
        return parse_sql(self.final_sql) if self.final_sql else None

    def column_values(self, index: int, limit: int | None = None) -> list[str]:
        """The cells of column `index` in row order (the first `limit` rows when given)."""
        rows = self.rows if limit is None else self.rows[:limit]
        return [row[index] if index < len(row) else "" for row in rows]

    def cells(self, index: int) -> Iterator[str]:
        """The cells of column `index`, lazily (for checks that stop at the first counterexample)."""
        return (row[index] if index < len(row) else "" for row in self.rows)


def read_query_log(text: str) -> list[str]:
    """The SQL strings of run_sql's log (one JSON object per line; broken lines skipped): the SQL
    that ran (`ran`, after the data layer's repairs: a bare `绿化率(%)` quoted), else as written."""
    queries = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict):
            continue
        ran, written = entry.get("ran"), entry.get("sql")
        if isinstance(ran, str) and ran.strip():
            queries.append(ran)
        elif isinstance(written, str):
            queries.append(written)
    return queries
