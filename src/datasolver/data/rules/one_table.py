"""On empty: a join that pairs nothing answered from the one table that holds what it selects.

The real 1.5B model kept a join that paired a land parcel's name with a housing project's name; each
table had rows for its own filters. When the diagnosis of the empty result finds such a join, the
rule asks the one table that holds the selected columns (`data.empty_result.one_table_query`).
"""

from __future__ import annotations

from datasolver.data.empty_result import one_table_query
from datasolver.data.rules.context import RuleContext

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)


def one_table(sql: str, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` asked of one table when the diagnosis says its join pairs nothing; [] otherwise."""
    if context.diagnosis is None or not context.diagnosis.join_pairs_nothing or len(sql) > MAX_SQL_CHARS:
        return []
    alone = one_table_query(sql, context.catalog)
    return [alone] if alone is not None else []
