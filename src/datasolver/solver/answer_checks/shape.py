"""Checks on the answer's own cells, helped by the final SQL's shape (no query runs here)."""

from __future__ import annotations

import re
from collections import Counter

from sqlglot import exp

from datasolver.clip import clip
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding
from datasolver.solver.prediction_check import is_null

_HELPER_NAME = re.compile(
    r"^(?:index|level_0|unnamed: ?\d+|rank|rnk|rn|row_?num(?:ber)?|row_?id|dense_rank|ranking|排名|名次|序号|行号)$"
)
_NUMBER_WITH_TEXT = re.compile(
    r"^(?P<pre>[-+]?\s*[$¥￥€£]?)\s*(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<post>[^\d\s][^\d]{0,11})?$"
)
_SAMPLE = 2_000  # cells per column for the text-pattern checks


def helper_column(ctx: AnswerContext) -> list[CheckFinding]:
    found = []
    parsed = ctx.parsed
    outputs = parsed.outputs() if parsed else {}
    asks_rank = ctx.shape.rank
    for index, name in enumerate(ctx.columns):
        key = name.strip().lower()
        if not asks_rank and (not key or _HELPER_NAME.match(key) or (parsed is not None and parsed.is_rank_column(name))):
            found.append(CheckFinding("helper_column", (
                f"column {name!r} is a row number / rank, which the question does not ask for: "
                "drop it from the final SELECT (keep the ordering in ORDER BY if it matters).")))
            continue
        if name not in outputs and not asks_rank and _is_sequence(ctx, index):
            found.append(CheckFinding("helper_column", (
                f"column {name!r} holds 0..n-1 or 1..n in row order ({len(ctx.rows)} rows{ctx.sample_note('checked')}) "
                "and does not come "
                "from the SQL: a leaked index or row number. Drop it.")))
    if parsed is not None and parsed.top_limit() is not None and not ctx.shape.quantity:
        for name in parsed.sorted_aggregates():
            if name in ctx.columns and len(ctx.columns) > 1:
                found.append(CheckFinding("helper_column", (
                    f"column {name!r} is an aggregate used to sort for `ORDER BY {parsed.order_sql()} "
                    f"LIMIT {parsed.top_limit()}`, and the question asks which, not how much: keep it in "
                    "ORDER BY but drop it from the SELECT list.")))
    return found


def constant_column(ctx: AnswerContext) -> list[CheckFinding]:
    if not ctx.rows:
        return []
    parsed = ctx.parsed
    filters = parsed.equality_filters() if parsed else []
    outputs = parsed.outputs() if parsed else {}
    quoted = ctx.shape.quoted
    found = []
    for index, name in enumerate(ctx.columns):
        first = ctx.rows[0][index] if index < len(ctx.rows[0]) else ""
        if any(cell != first for cell in ctx.cells(index)):
            continue
        value = first.strip()
        if is_null(value):
            continue  # all_null_column says it
        expr = outputs.get(name)
        source = expr.name if expr is not None and expr.key == "column" else None
        echoed = next(
            (sql for column, literal, sql in ((c, lit, p.sql(dialect="duckdb")) for c, lit, p in filters)
             if _same(literal, value) and (source == column or not _is_number(value))),
            None,
        )
        if echoed is not None:
            found.append(CheckFinding("constant_column", (
                f"column {name!r} is {value!r} in all {len(ctx.rows)} row(s){ctx.sample_note('seen')}: the value "
                f"your filter `{echoed}` "
                "fixes, echoed back. Drop it unless the question asks for it.")))
        elif len(ctx.columns) > 1 and (
                (len(value) >= 2 and value in quoted)
                or (parsed is not None and parsed.is_literal_column(name) and _in_question(value, ctx.question))):
            typed = " (a constant typed into the SELECT list)" if parsed is not None and parsed.is_literal_column(name) else ""
            found.append(CheckFinding("constant_column", (
                f"column {name!r} is {value!r} in all {len(ctx.rows)} row(s){ctx.sample_note('seen')}, the value "
                f"the question names{typed}: "
                "it repeats the question's filter. Drop it unless the question asks for it.")))
    return found


def same_expression(ctx: AnswerContext) -> list[CheckFinding]:
    """Two answer columns the final SELECT computes by the same expression (aliases aside): they hold
    the same values in every row. The real 1.5B model answered "how many course offerings have a final
    exam and how many do not?" with `COUNT(*) AS a, COUNT(*) AS b … WHERE has_final_exam = TRUE`."""
    parsed = ctx.parsed
    if parsed is None:
        return []
    first_of: dict[str, str] = {}
    found = []
    for name, expr in parsed.outputs().items():
        if name not in ctx.columns or expr.find(exp.Star) is expr:
            continue
        key = expr.sql(dialect="duckdb", normalize=True)
        if key not in first_of:
            first_of[key] = name
            continue
        found.append(CheckFinding("same_expression", (
            f"columns {first_of[key]!r} and {name!r} are the same expression `{clip(expr.sql(dialect='duckdb'), 120)}`, "
            "so they hold the same values in every row; two columns of an answer are two different things the "
            "question asks for. Give each its own condition (`count(*) FILTER (WHERE …)`, a CASE), or GROUP BY "
            "the column whose values tell them apart (one row per value); otherwise drop one.")))
    return found


def duplicate_rows(ctx: AnswerContext) -> list[CheckFinding]:
    # Joined text hashes about twice as fast as tuples; a separator inside a cell can only merge
    # rows, which the exact count below then rules out.
    if len(set(map("\x1f".join, ctx.rows))) == len(ctx.rows):
        return []
    counts = Counter(map(tuple, ctx.rows))
    dupes = sum(n - 1 for n in counts.values() if n > 1)
    if not dupes:
        return []
    parsed = ctx.parsed
    # One row per value the question lists (`name IN ('a', 'b')`): equal answers are expected,
    # unless a UNION ALL repeats them (`… UNION ALL …` of a one-row answer).
    if parsed is not None and not parsed.repeats_by_union_all() and len(ctx.rows) <= parsed.largest_value_list():
        return []
    worst = max(counts.values())
    return [CheckFinding("duplicate_rows", (
        f"{dupes} of {len(ctx.rows)} rows repeat another row ({len(counts)} distinct; one row appears "
        f"{worst} times){ctx.sample_note()}. If the question wants each entity once, use SELECT DISTINCT or "
        "GROUP BY; if it wants raw records, keep them, but check that no join multiplies rows."))]


def all_null_column(ctx: AnswerContext) -> list[CheckFinding]:
    if not ctx.rows:
        return []
    columns = ctx.null_columns()
    if ctx.every_cell_null():
        # Nothing but NULLs: empty_result says which filter found nothing. Only a NULL typed into
        # the SELECT list is named here too: it is an extra column whatever the filters find.
        parsed = ctx.parsed
        columns = [i for i in columns if parsed is not None and parsed.is_null_literal(ctx.columns[i])]
    return [CheckFinding("all_null_column", (
        f"column {ctx.columns[index]!r} is NULL in all {ctx.n_rows} rows: a wrong column, a join that found "
        "nothing, or a TRY_CAST that failed. Fix it, or drop it if the question does not ask for it."))
        for index in columns]


def text_numbers(ctx: AnswerContext) -> list[CheckFinding]:
    parsed = ctx.parsed
    found = []
    for index, name in enumerate(ctx.columns):
        if parsed is not None and parsed.is_source_column(name):
            continue  # copied from the data as it is: the reference answer has the same text
        cells = [v.strip() for v in ctx.column_values(index, _SAMPLE) if not is_null(v)]
        if not cells:
            continue
        decorated = []
        plain = 0
        for cell in cells:
            match = _NUMBER_WITH_TEXT.match(cell)
            if match is None:
                continue
            if match["post"] or match["pre"].strip(" +-") or "," in match["num"]:
                decorated.append(cell)
            else:
                plain += 1
        if decorated and len(decorated) + plain >= 0.8 * len(cells):
            examples = ", ".join(repr(c) for c in decorated[:3])
            found.append(CheckFinding("text_numbers", (
                f"column {name!r} holds numbers with text around them ({len(decorated)} of {len(cells)} "
                f"cells, e.g. {examples}): the scorer compares plain numbers, so '12.5%' is not 12.5. "
                "Return the bare number (no unit, %, currency sign or thousands separator).")))
    return found


def _is_sequence(ctx: AnswerContext, index: int) -> bool:
    """Column `index` is 0..n-1 or 1..n in row order (n >= 3); stops at the first counterexample."""
    if len(ctx.rows) < 3:
        return False
    try:
        start = int(ctx.column_values(index, 1)[0].strip())
    except ValueError:
        return False
    if start not in (0, 1):
        return False
    for offset, cell in enumerate(ctx.cells(index)):
        if cell.strip() != str(start + offset):
            return False
    return True


def _in_question(value: str, question: str) -> bool:
    """`value` stands in the question as a word of its own (case-insensitive; `5` is not in `50`,
    and `5.0` is found as `5`)."""
    words = {value.lower()}
    if _is_number(value) and float(value.replace(",", "")).is_integer():
        words.add(str(int(float(value.replace(",", "")))))
    text = question.lower()
    return any(re.search(r"(?<![\w.])" + re.escape(w) + r"(?![\w]|\.\d)", text) for w in words if w)


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _same(literal: str, value: str) -> bool:
    if literal.strip() == value:
        return True
    if _is_number(literal) and _is_number(value):
        return float(literal.replace(",", "")) == float(value.replace(",", ""))
    return False
