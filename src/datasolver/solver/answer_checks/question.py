"""Checks of the answer's shape against what the question asks for (no query runs here).

The mistakes a real small model made on tasks nobody tuned for (issue 31): a question over a range
of years answered with one row; "which of A or B is lower?" answered with both; a ratio answered
with a count.
"""

from __future__ import annotations

import re

from sqlglot import exp

from datasolver.data.linking import date_mentions
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding

# The question wants one row (or value) per period: each year, per month, 分别, 逐年 …
_PER_PERIOD = re.compile(
    r"每年|每一年|各年|历年|逐年|每个?月|各月|逐月|分别|各自|每季度|各季度|"
    r"\b(?:each|every|per|by)\s+(?:year|month|quarter)\b|\byear[- ]by[- ]year\b|\b(?:annual|yearly|monthly)\b|"
    r"\bfor each of\b|\brespectively\b",
    re.IGNORECASE)
# "Which of A or B …er", "A和B哪个更…", "A还是B": the question wants the one, not both.
_WHICH_ONE_EN = re.compile(
    r"\bwhich\b(?:\s+one)?(?:\s+\w+){0,3}?\s*(?:,|:)?\s*(?:of|between)?\b.{1,80}?\b(?:or|and)\b.{1,80}?"
    r"\b(?:lower|higher|more|less|fewer|larger|smaller|greater|bigger|cheaper|earlier|later|older|newer|"
    r"longer|shorter|most|least|best|worst|highest|lowest|largest|smallest)\b", re.IGNORECASE | re.DOTALL)
_WHICH_ONE_ZH = re.compile(r"(?:哪个|哪一个|哪家|哪一家|哪座|哪个城市|哪个区|哪个项目|谁)(?:的)?.{0,16}?(?:更|较|最|比较)"
                           r"|还是.{0,24}?(?:更|较)")
_TWO_NAMED_ZH = re.compile(r"[和与跟及]|还是|、")
# The question asks for a ratio or a share (not a count).
_RATIO = re.compile(r"\b(?:ratio|percentage|percent|proportion|fraction|share of|rate of)\b|占比|比例|百分比|比率|比值|"
                    r"所占比|百分之", re.IGNORECASE)


def range_rows(ctx: AnswerContext) -> list[CheckFinding]:
    """A question over several years (or months) that asks for each of them, answered with fewer
    rows than periods."""
    if not _PER_PERIOD.search(ctx.question):
        return []
    periods: list[str] = []
    for mention in date_mentions(ctx.question):
        if mention.kind == "years" and len(mention.years) > 1:
            periods += mention.years
        elif mention.kind == "quarter":
            periods += mention.months
    periods = list(dict.fromkeys(periods))
    if len(periods) < 2 or ctx.n_rows >= len(periods) or ctx.n_rows == 0:
        return []
    return [CheckFinding("range_rows", (
        f"the question asks for each of {', '.join(periods)} ({len(periods)} periods) but the answer has "
        f"{ctx.n_rows} row(s): check the date filter covers the whole range (e.g. `BETWEEN {periods[0]} AND "
        f"{periods[-1]}` on the year) and GROUP BY the period, one row each."))]


def both_of_two(ctx: AnswerContext) -> list[CheckFinding]:
    """"Which of A or B is lower?" answered with both A and B."""
    asks_one = bool(_WHICH_ONE_EN.search(ctx.question)) or (
        bool(_WHICH_ONE_ZH.search(ctx.question)) and bool(_TWO_NAMED_ZH.search(ctx.question)))
    if not asks_one or ctx.n_rows != 2:
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
    if not _RATIO.search(ctx.question) or ctx.parsed is None or ctx.final_sql is None:
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
