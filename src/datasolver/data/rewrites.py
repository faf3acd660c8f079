"""The program's rewrites of a query that found nothing or failed, tried before a model is asked again.

A small model told why its query found nothing often writes it again unchanged (the real 1.5B model
wrote `时间(月份) = '2022-07'` where the data says `'2022年07月'` three times running, and kept a join
that paired a land parcel's name with a housing project's name). What it would have to guess is
sometimes decided cheaply: the value the question linking found in the filtered column
(`linking.respell_filters`), or, for a join whose tables each have rows for their own filters, the
one table that holds what the query selects (`empty_result.one_table_query`). A query that failed to
parse at a piece of a column name (the model wrote `GROUP 开发商` for the column 集团开发商, and wrote it
again after the hint named the column) has the name written whole in its place (`whole_column_names`).
Each rewrite is only a candidate: whoever runs it keeps it when it answers and passes its checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from datasolver.data.empty_result import EmptyDiagnosis, one_table_query
from datasolver.data.linking import QuestionLinks, respell_filters
from datasolver.data.names import quote_ident
from datasolver.data.sql_tokens import significant, tokenize

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


SPLIT_COLUMNS_TRIED = 3  # columns holding the piece, each tried in its place


def rewrites_of_error(sql: str, error: str, catalog: Catalog) -> list[tuple[str, str]]:
    """(SQL, what was rewritten) for `sql`, a query that failed with `error`: `whole_column_names`
    when the error is a syntax error at a piece of a column name. [] otherwise."""
    split = catalog.split_column(error, sql)
    if split is None:
        return []
    piece, columns = split
    return whole_column_names(sql, piece, columns[:SPLIT_COLUMNS_TRIED])


def whole_column_names(sql: str, piece: str, columns: list[str]) -> list[tuple[str, str]]:
    """`sql` with the bare word `piece` (and the word written beside it for the rest of the name,
    when there is one) replaced by one of `columns`, the names that hold the piece, double-quoted: each
    variant that DuckDB parses, in the order the columns come, the word alone before the word with
    its neighbour. A word is only ever joined with a neighbour across spaces (never across a comma, a
    dot or a bracket), and strings, quoted names and comments are never touched."""
    tokens = significant(tokenize(sql))
    found: list[tuple[str, str]] = []
    with duckdb.connect() as parser:  # one private parser for every variant (nothing runs on it)
        for column in columns:
            for i, token in enumerate(tokens):
                if token.kind != "word" or token.text.casefold() != piece.casefold():
                    continue
                spans = [(i, i)]
                if i > 0 and tokens[i - 1].kind == "word" and not sql[tokens[i - 1].end:token.start].strip():
                    spans.append((i - 1, i))
                if (i + 1 < len(tokens) and tokens[i + 1].kind == "word"
                        and not sql[token.end:tokens[i + 1].start].strip()):
                    spans.append((i, i + 1))
                for first, last in spans:
                    start, end = tokens[first].start, tokens[last].end
                    variant = sql[:start] + quote_ident(column) + sql[end:]
                    if _parses(parser, variant) and variant not in (v for v, _ in found):
                        written = sql[start:end]
                        found.append((variant, f'the column name "{column}" written whole for `{written}`'))
    return found


def _parses(parser: duckdb.DuckDBPyConnection, sql: str) -> bool:
    try:
        parser.extract_statements(sql)
    except duckdb.Error:
        return False
    return True
