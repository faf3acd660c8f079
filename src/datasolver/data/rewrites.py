"""The program's rewrites of a query that found nothing, tried before a model is asked again.

A small model told why its query found nothing often writes it again unchanged (the real 1.5B model
wrote `时间(月份) = '2022-07'` where the data says `'2022年07月'` three times running, and kept a join
that paired a land parcel's name with a housing project's name). What it would have to guess is
sometimes decided cheaply: the value the question linking found in the filtered column
(`linking.respell_filters`), or, for a join whose tables each have rows for their own filters, the
one table that holds what the query selects (`empty_result.one_table_query`). Each rewrite is only a
candidate: whoever runs it keeps it when it answers and passes its checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from datasolver.data.empty_result import EmptyDiagnosis, one_table_query
from datasolver.data.linking import QuestionLinks, respell_filters

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog


def rewrites_of_nothing_found(sql: str, catalog: Catalog, links: QuestionLinks | None,
                              diagnosis: EmptyDiagnosis | None) -> list[tuple[str, str]]:
    """(SQL, what was rewritten) for `sql`, a query whose filters found nothing, in the order to try:
    the linked filter values put in, then, when `diagnosis` finds a join that pairs nothing, the one
    table that holds what it selects. [] when neither applies."""
    found: list[tuple[str, str]] = []
    respelled = respell_filters(sql, links) if links is not None else None
    if respelled is not None:
        found.append((respelled[0], f"the filter values the question names were put in ({'; '.join(respelled[1])})"))
    alone = one_table_query(sql, catalog) if diagnosis is not None and diagnosis.join_pairs_nothing else None
    if alone is not None:
        found.append(alone)
    return found
