"""On empty: a filter that emptied the result, retried with the column's existing value spelt like it.

The real 1.5B model, told which filter emptied its result and the column's nearest existing values,
sent the same filter again six times. The diagnosis (`data.empty_result.explain_empty`) knows the
filter whose removal brings rows back and the values nearest its text; when the nearest is the same
value spelt otherwise (case, spacing, punctuation, the same digits, one inside the other), the rule
puts it in, as a candidate the answer checks judge.
"""

from __future__ import annotations

import re

from datasolver.data.empty_result import filter_respelled
from datasolver.data.rules.context import RuleContext

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
FILTERS_TRIED = 3  # filters of the diagnosis that bring rows back, in its order
MIN_INSIDE_CHARS = 3  # a value found inside the other counts only from this length
MIN_DATE_DIGITS = 4  # digits alone (`2022-07`) count as the same value from this many

_EQ_STRING = re.compile(r"^.+ = '((?:[^']|'')*)'$", re.DOTALL)
_NOISE = re.compile(r"[\W_]+")


def nearest_value(sql: str, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with each `column = 'text'` filter whose removal brings rows back given the column's nearest
    existing value, when that value is `text` spelt otherwise (`same_value`); [] when none is."""
    diagnosis = context.diagnosis
    if diagnosis is None or len(sql) > MAX_SQL_CHARS:
        return []
    found = []
    for probe in diagnosis.brings_rows_back[:FILTERS_TRIED]:
        written = _EQ_STRING.match(probe.condition)
        if written is None or not probe.nearest:
            continue
        text = written.group(1).replace("''", "'")
        value = probe.nearest[0]
        if value == text or not same_value(text, value):
            continue
        rewritten = filter_respelled(sql, probe.condition, value)
        if rewritten is not None:
            found.append((rewritten, f"`{probe.condition}` matched nothing; the data writes {value!r}"))
    return found


def same_value(written: str, existing: str) -> bool:
    """Whether `existing` is `written` spelt otherwise: equal without case, spaces and punctuation, the same
    run of four or more digits (`2022-07`, `2022年07月`), or one inside the other (`Lyon`, `Lyon 2e`)."""
    a, b = _NOISE.sub("", written.casefold()), _NOISE.sub("", existing.casefold())
    if not a or not b:
        return False
    if a == b:
        return True
    if len(a) >= MIN_DATE_DIGITS and a.isdigit() and a == re.sub(r"\D", "", b):  # a date written otherwise
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= MIN_INSIDE_CHARS and short in long
