"""On error: a column name written whole where a piece of it did not parse.

The real 1.5B model wrote `GROUP 开发商` for the column 集团开发商, and wrote it again after the hint
named the column. When DuckDB's syntax error is at a word that is a piece of column names
(`rules/column_piece.split_column`), the rule writes each of those names whole in the word's place.
"""

from __future__ import annotations

import duckdb

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.column_piece import split_column
from datasolver.data.names import quote_ident
from datasolver.data.sql_tokens import significant, tokenize
from datasolver.data.rules.context import RuleContext

MAX_SQL_CHARS = 20_000  # of a query the rule reads (a longer one is left as it is)
SPLIT_COLUMNS_TRIED = 3  # columns holding the piece, each tried in its place


def whole_column_name(sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]:
    """`sql` with the piece the syntax error is at replaced by each column name holding it (the first
    `SPLIT_COLUMNS_TRIED`), each variant that parses. [] when the error is another."""
    if len(sql) > MAX_SQL_CHARS:
        return []
    split = split_column(error, sql, context.catalog)
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
