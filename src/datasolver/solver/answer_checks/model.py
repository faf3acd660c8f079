"""What an answer check sees (the answer and where it came from) and what it reports."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from datasolver.data.errors import QueryInterrupted
from datasolver.data.question_shape import QuestionShape, read_question
from datasolver.solver.answer_checks.sqlshape import MAX_SQL_CHARS, ParsedSql, parse_sql, sql_refusal
from datasolver.solver.prediction_check import is_null
from datasolver.untrusted_json import BadJSON, parse_object

if TYPE_CHECKING:
    from datasolver.data import Catalog, QueryResult

CHECK_NAMES = (
    "helper_column",
    "constant_column",
    "same_expression",
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
    "asked_items",
)
INFORMS_ONLY = frozenset({"ties_cut"})
"""Checks that describe a choice the question decides; they never send the model back."""

CHECK_LINE = re.compile(r"^CHECK (\w+): ", re.MULTILINE)
QUERY_TIMEOUT_S = 4.0
"""Each query an answer check runs on the parent's catalog stops after this long (a note, no finding)."""
CHECKS_BUDGET_S = 8.0
"""All the checks' queries of one run together: the SQL they re-run comes from a log solver.py wrote."""
QUERY_LINE_MAX_BYTES = 2 * MAX_SQL_CHARS + 1024
"""A longer line of run_sql's log is skipped: its SQL would be over what the checks read anyway."""


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
    there are, and `non_null` (per column, over all rows) keeps the NULL checks exact. `shape` is
    what the question asks for, read once (`data/question_shape.py`): the task's, or read here when
    none is given.
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
    deadline: float | None = None  # time.monotonic() past which no check query runs (CHECKS_BUDGET_S)
    shape: QuestionShape = None  # type: ignore[assignment]  # filled from `question` when not given

    def __post_init__(self) -> None:
        if self.shape is None:
            self.shape = read_question(self.question)

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
        if not self.final_sql:
            return None
        if why := sql_refusal(self.final_sql):
            self.notes.append(why + ": the checks that read it were skipped")
            return None
        return parse_sql(self.final_sql)

    def seconds_left(self) -> float:
        """What remains of the checks' budget (CHECKS_BUDGET_S from `deadline`; all of it without one)."""
        return CHECKS_BUDGET_S if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def query(self, sql: str, limit: int) -> QueryResult:
        """`catalog.query` under QUERY_TIMEOUT_S, and not past `deadline` (QueryInterrupted, a
        DataError the checks note, when the checks' time is spent)."""
        assert self.catalog is not None
        left = QUERY_TIMEOUT_S if self.deadline is None else min(QUERY_TIMEOUT_S, self.deadline - time.monotonic())
        if left <= 0:
            raise QueryInterrupted(f"not run: the answer checks' {CHECKS_BUDGET_S:g} s were spent", sql)
        return self.catalog.query(sql, limit=limit, timeout_s=left)

    def column_values(self, index: int, limit: int | None = None) -> list[str]:
        """The cells of column `index` in row order (the first `limit` rows when given)."""
        rows = self.rows if limit is None else self.rows[:limit]
        return [row[index] if index < len(row) else "" for row in rows]

    def cells(self, index: int) -> Iterator[str]:
        """The cells of column `index`, lazily (for checks that stop at the first counterexample)."""
        return (row[index] if index < len(row) else "" for row in self.rows)


def read_query_log(text: str, notes: list[str] | None = None) -> list[str]:
    """The SQL strings of run_sql's log (one JSON object per line): the SQL that ran (`ran`, after
    the data layer's repairs: a bare `绿化率(%)` quoted), else as written. solver.py writes that file, so
    each line is read as untrusted: one longer than QUERY_LINE_MAX_BYTES, not a JSON object or
    nested too deeply is skipped (with a line in `notes` when given)."""
    queries, skipped = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > QUERY_LINE_MAX_BYTES:
            skipped.append(f"line {number}: over {QUERY_LINE_MAX_BYTES:,} characters")
            continue
        try:
            entry = parse_object(line)
        except BadJSON as exc:
            skipped.append(f"line {number}: {exc}")
            continue
        ran, written = entry.get("ran"), entry.get("sql")
        if isinstance(ran, str) and ran.strip():
            queries.append(ran)
        elif isinstance(written, str):
            queries.append(written)
    if skipped and notes is not None:
        notes.append(f"run_sql's log: {len(skipped)} line(s) skipped ({'; '.join(skipped[:3])})")
    return queries
