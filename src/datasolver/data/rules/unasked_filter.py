"""On empty: a filter the question never asked for, which emptied the result, dropped.

A small model adds filters of its own (`status = 'active'`, a year it guessed) and, told which one
emptied the result, sends it again. When the diagnosis (`data.empty_result.explain_empty`) shows a
filter whose removal brings rows back, and the question names neither its value nor its column (no
word of the question is the value, and the question linking links neither the column's name nor a
value in it), the rule drops it, as a candidate the answer checks judge. A number compared is kept
whenever the question states a number of its own: the threshold may be written in other units
(`EU_Sales > 5000000` for "超过50万" over data in millions emptied the result, and dropping the
filter answered a question it did not ask). When no filter alone brings rows back, the unasked ones are
dropped together (falcon_233: `FirstName = 'John' AND LastName = 'Makori'`, a teacher the question never
named, each half alone still matching nothing). A HAVING part that keeps none of the groups
(`HAVING COUNT(*) > 100` where the most is 37) is dropped on the same terms: the question writes no number
(nor its value), and links no column its aggregate reads.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from datasolver.data.empty_result import filter_dropped, having_dropped
from datasolver.data.linking import QuestionLinks
from datasolver.data.rules.context import RuleContext
from datasolver.data.rules.nearest_value import MIN_DATE_DIGITS, same_value

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
FILTERS_TRIED = 3  # filters of the diagnosis that bring rows back, in its order; at most as many dropped together

MAX_QUESTION_READ = 4_000  # characters of the question searched for a number of its own
# A number of the question's own: digits, or a CJK numeral or unit (五, 十, 百, 千, 万, 亿).
_NUMBER = re.compile(r"[0-9０-９]|[一二三四五六七八九十百千万亿两]")

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.ILike)


def unasked_filter(sql: str, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` without a filter whose removal brings rows back and that the question does not ask for
    (`asked`); [] without a question's links or a diagnosis, or when every such filter is asked for."""
    diagnosis, links = context.diagnosis, context.links
    if diagnosis is None or links is None or len(sql) > MAX_SQL_CHARS:
        return []
    found = []
    for probe in diagnosis.brings_rows_back[:FILTERS_TRIED]:
        if asked(probe.condition, links):
            continue
        rewritten = filter_dropped(sql, probe.condition)
        if rewritten is not None:
            found.append((rewritten, f"`{probe.condition}` matched nothing and the question does not name it: "
                                     f"dropped ({probe.rows} rows without it)"))
    if not diagnosis.brings_rows_back:
        found += _dropped_together(sql, [p.condition for p in diagnosis.probes if not asked(p.condition, links)])
    for having in diagnosis.having_empties[:FILTERS_TRIED]:
        if having_asked(having.condition, links):
            continue
        rewritten = having_dropped(sql, having.condition)
        if rewritten is not None:
            reached = f" ({having.measured} across the groups: {having.reached})" if having.reached else ""
            found.append((rewritten, f"HAVING `{having.condition}` kept none of the {having.groups} groups{reached} "
                                     "and the question does not name it: dropped"))
    return found


def _dropped_together(sql: str, unasked: list[str]) -> list[tuple[str, str]]:
    """`sql` without all of its unasked filters (two to `FILTERS_TRIED` of them) when no filter alone brings rows
    back: a model that invents a name writes its two halves (`first_name = 'John' AND last_name = 'Smith'`),
    and each alone still empties the result."""
    if not 2 <= len(unasked) <= FILTERS_TRIED:
        return []
    rewritten: str | None = sql
    for condition in unasked:
        rewritten = filter_dropped(rewritten, condition) if rewritten is not None else None
    if rewritten is None:
        return []
    named = ", ".join(f"`{c}`" for c in unasked)
    return [(rewritten, f"{named} matched nothing, none alone brought rows back, and the question names none of "
                        "them: dropped together")]


def _comparison_sides(condition: str) -> tuple[exp.Expression, ...] | None:
    """The two sides of `condition` when it is one comparison, () when it is something else, None when it
    does not parse."""
    try:
        node = sqlglot.parse_one(condition, read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    return (node.this, node.expression) if isinstance(node, _COMPARISONS) else ()


def asked(condition: str, links: QuestionLinks) -> bool:
    """Whether the question asks for the filter `condition`: it is not one column compared to one value, the
    question writes the value (or writes it otherwise), or the question linking links the column's name or a value in it."""
    sides = _comparison_sides(condition)
    if sides is None:
        return True
    columns = [n for n in sides if isinstance(n, exp.Column)]
    literals = [n for n in sides if isinstance(n, exp.Literal)]
    if len(columns) != 1 or len(literals) != 1:
        return True  # not one column compared to one value: what it asks is not known
    return _value_asked(literals[0], links) or _linked(columns[0].name, links)


def having_asked(condition: str, links: QuestionLinks) -> bool:
    """Whether the question asks for the HAVING part `condition`: it is not an aggregate compared to one value,
    the question writes the value (or writes it otherwise, or writes a number of its own when it is one), or
    the question linking links a column the aggregate reads."""
    sides = _comparison_sides(condition)
    if sides is None:
        return True
    literals = [n for n in sides if isinstance(n, exp.Literal)]
    measured = [n for n in sides if not isinstance(n, exp.Literal) and any(True for _ in n.find_all(exp.AggFunc))]
    if len(literals) != 1 or len(measured) != 1:
        return True  # not an aggregate compared to one value (an alias, `total > 5`, is not read): not known
    return _value_asked(literals[0], links) or any(_linked(c.name, links) for c in measured[0].find_all(exp.Column))


def _value_asked(literal: exp.Literal, links: QuestionLinks) -> bool:
    """Whether the question writes `literal`'s value, or writes it otherwise, or (a number) writes a number."""
    value = literal.name.strip("% ").casefold()
    if not value or value in links.question.casefold() or _written_otherwise(value, links):
        return True
    # a threshold the question may state in other units (50万 for 500000, 0.5 million)
    return not literal.is_string and bool(_NUMBER.search(links.question[:MAX_QUESTION_READ]))


def _linked(column: str, links: QuestionLinks) -> bool:
    """Whether the question linking links the column's name or a value in it."""
    name = column.casefold()
    return (any(c.casefold() == name for _, c in links.columns)
            or any(h.column.casefold() == name for h in links.values)
            or any(c.casefold() == name for _, c, _ in links.column_parts))


def _written_otherwise(value: str, links: QuestionLinks) -> bool:
    """Whether the question writes `value` otherwise: one of its literals is the same value (`same_value`), or
    the value's four or more digits stand in the question's digits (`'2020-12'` for 2020年12月)."""
    if any(same_value(value, literal.text) for literal in links.literals):
        return True
    digits = re.sub(r"\D", "", value)
    return len(digits) >= MIN_DATE_DIGITS and digits in re.sub(r"\D", "", links.question)
