"""Checks of the answer's shape against what the question asks for (no query runs here).

The mistakes a real small model made on tasks nobody tuned for (issue 31): a question over a range
of years answered with one row; "which of A or B is lower?" answered with both; a ratio answered
with a count.
What the question asks for is read once, into `ctx.shape` (`data/question_shape.py`).
"""

from __future__ import annotations

from sqlglot import exp

from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding


def range_rows(ctx: AnswerContext) -> list[CheckFinding]:
    """A question over several years (or months) that asks for each of them, answered with fewer
    rows than periods."""
    if not ctx.shape.per_period:
        return []
    periods = ctx.shape.periods
    if len(periods) < 2 or ctx.n_rows >= len(periods) or ctx.n_rows == 0:
        return []
    return [CheckFinding("range_rows", (
        f"the question asks for each of {', '.join(periods)} ({len(periods)} periods) but the answer has "
        f"{ctx.n_rows} row(s): check the date filter covers the whole range (e.g. `BETWEEN {periods[0]} AND "
        f"{periods[-1]}` on the year) and GROUP BY the period, one row each."))]


def both_of_two(ctx: AnswerContext) -> list[CheckFinding]:
    """"Which of A or B is lower?" answered with both A and B."""
    if not ctx.shape.which_of_two or ctx.n_rows != 2:
        return []
    # Only when each row is one of the two the question names (a cell the question spells): two
    # rows of other things (one per district, say) can be the answer itself.
    if sum(1 for row in ctx.rows if any(len(c.strip()) > 1 and c.strip() in ctx.question for c in row)) < 2:
        return []
    return [CheckFinding("both_of_two", (
        "the question asks which one of the two it names, and the answer lists both (2 rows): keep only the "
        "one the comparison picks (ORDER BY the compared value, LIMIT 1) and only the columns the question "
        "asks for."))]


def ratio_count(ctx: AnswerContext) -> list[CheckFinding]:
    """A ratio or share asked for, answered by a query that divides nothing (a count)."""
    if not ctx.shape.ratio or ctx.parsed is None or ctx.final_sql is None:
        return []
    tree = ctx.parsed.tree
    if tree is None or any(True for _ in tree.find_all(exp.Div, exp.IntDiv)):
        return []
    if not any(True for _ in tree.find_all(exp.Count, exp.Sum)):
        return []
    return [CheckFinding("ratio_count", (
        "the question asks for a ratio or share, but the query divides nothing (it counts or sums): compute "
        "the ratio itself, e.g. `count(*) FILTER (WHERE …) / count(*)`, or the part divided by the whole, "
        "in the unit the question asks (a percentage × 100)."))]
