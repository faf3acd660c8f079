"""Asked-items coverage for the Solver: every quantity the question asks for has a column, and no column
stands beside the asked ones that the question neither names nor names a value of.

The real 1.5B model answered a ratio asked "and the annual numbers as well" without the ratio, and
returned a plot's name beside the one price asked for (issue 46). Which columns a question names is the
analyst's asked-items coverage (`data/asked_items.names_column`, which ask/checks.py reads too); what
the question asks for is its shape, read once (`ctx.shape`). No query runs here.

Bounded: the check reads at most `MAX_COLUMNS` columns and the first `CELLS_READ` cells of each.
"""

from __future__ import annotations

import re

from sqlglot import exp

from datasolver.data.asked_items import names_column
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding

MAX_COLUMNS = 30  # an answer wider than this is not checked
CELLS_READ = 50  # cells of a column looked for in the question

# A column that holds a ratio by its name: ratio, rate, percent, share, 率, 比, 占比, %.
_RATIO_NAME = re.compile(r"ratio|rate|percent|pct|share|proportion|fraction|率|比|%", re.IGNORECASE)
_NUMBER = re.compile(r"^[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?%?$")
# The question asks which thing, or for its name: a name column is asked for then.
_WHICH = re.compile(r"\b(?:which|who|whose|what\s+(?:is|are|was|were)\s+the\s+names?|name)\b|哪|谁|名称|名字|叫什么",
                    re.IGNORECASE)


def asked_items(ctx: AnswerContext) -> list[CheckFinding]:
    """A ratio asked for without a ratio column (the query divides somewhere, or `ratio_count` says it),
    a ratio asked for "and … as well" answered with the ratio alone, and, for a question asking one
    value (not which thing), a text column beside the columns it names that it neither names nor names
    a value of."""
    if not ctx.columns or len(ctx.columns) > MAX_COLUMNS or not ctx.rows:
        return []
    return _missing_ratio(ctx) + _unasked_column(ctx)


def _missing_ratio(ctx: AnswerContext) -> list[CheckFinding]:
    shape, parsed = ctx.shape, ctx.parsed
    if not shape.ratio or parsed is None or parsed.tree is None:
        return []
    outputs = parsed.outputs()
    ratios = [c for c in ctx.columns if _RATIO_NAME.search(c)
              or (c in outputs and any(True for _ in outputs[c].find_all(exp.Div, exp.IntDiv)))]
    divides = any(True for _ in parsed.tree.find_all(exp.Div, exp.IntDiv))
    if not ratios and divides:
        return [CheckFinding("asked_items", (
            f"the question asks for a ratio or share, and no column of the answer ({', '.join(ctx.columns)}) is "
            "one: select the division itself as a column (e.g. `a / b AS ratio`, × 100 for a percentage), "
            "beside the other values the question asks for."))]
    if ratios and shape.also and len(ctx.columns) == len(ratios):
        return [CheckFinding("asked_items", (
            f"the question asks for a ratio and for more values beside it, and the answer holds the ratio "
            f"alone ({', '.join(ctx.columns)}): add a column for each other value it asks for (the numbers the "
            "ratio is made of, per period when it asks per period)."))]
    return []


def _unasked_column(ctx: AnswerContext) -> list[CheckFinding]:
    shape = ctx.shape
    if shape.asks_many or shape.per_period or shape.count is not None or not shape.quantity or ctx.n_rows != 1:
        return []
    if _WHICH.search(shape.text):
        return []
    named = [c for c in ctx.columns if names_column(shape.text, c)]
    if not named:
        return []
    found = []
    for index, column in enumerate(ctx.columns):
        if column in named:
            continue
        cells = [c.strip() for c in ctx.column_values(index, CELLS_READ) if c.strip()]
        if not cells or any(_NUMBER.match(c) for c in cells):
            continue  # a number: a quantity the question may ask for by another word
        if any(c.casefold() in shape.text.casefold() for c in cells):
            continue  # a value the question names (a period, an entity): the answer's label
        found.append(CheckFinding("asked_items", (
            f"column {column!r} ({cells[0]!r}) stands beside {', '.join(repr(n) for n in named)}, which the question "
            "asks for, and the question neither names it nor asks which one: drop it from the SELECT list "
            "unless the question asks for it.")))
    return found
