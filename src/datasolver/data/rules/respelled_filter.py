"""On empty: the filter values the question names put in for the ones the query wrote.

A small model told why its query found nothing often writes it again unchanged (the real 1.5B model
wrote `时间(月份) = '2022-07'` where the data says `'2022年07月'`, three times running). The question
linking found the value as the data writes it; the rule puts it in (`data.linking.respell_filters`).
"""

from __future__ import annotations

from datasolver.data.linking import respell_filters
from datasolver.data.rules.context import RuleContext

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)


def respelled_filter(sql: str, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with the linked filter values put in; [] when the question links none it filters on."""
    if context.links is None or len(sql) > MAX_SQL_CHARS:
        return []
    respelled = respell_filters(sql, context.links)
    if respelled is None:
        return []
    return [(respelled[0], f"the filter values the question names were put in ({'; '.join(respelled[1])})")]
