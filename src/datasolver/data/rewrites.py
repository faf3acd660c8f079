"""The program's rewrites of a query that found nothing or failed, tried before a model is asked again.

A small model told why its query found nothing often writes it again unchanged (the real 1.5B model
wrote `时间(月份) = '2022-07'` where the data says `'2022年07月'` three times running, and kept a join
that paired a land parcel's name with a housing project's name). What it would have to guess is
sometimes decided cheaply: the value the question linking found in the filtered column
(`linking.respell_filters`), or, for a join whose tables each have rows for their own filters, the
one table that holds what the query selects (`empty_result.one_table_query`). A query that failed to
parse at a piece of a column name (the model wrote `GROUP 开发商` for the column 集团开发商, and wrote it
again after the hint named the column) has the name written whole in its place (`whole_column_names`);
one that looked for a column in the wrong table of a join (`T2.所属集团`, which T1 has) is tried with
the column taken from its table and, when the question names it, the column DuckDB offers in T2
(`moved_columns`).
Each rewrite is only a candidate: whoever runs it keeps it when it answers and passes its checks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import duckdb
import sqlglot
from sqlglot import exp

from datasolver.data.empty_result import EmptyDiagnosis, one_table_query
from datasolver.data.linking import QuestionLinks, respell_filters
from datasolver.data.names import quote_ident
from datasolver.data.errors import DataError
from datasolver.data.sql_tokens import Token, significant, tokenize, unquote

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


def rewrites_of_error(sql: str, error: str, catalog: Catalog,
                      links: QuestionLinks | None = None) -> list[tuple[str, str]]:
    """(SQL, what was rewritten) for `sql`, a query that failed with `error`: `whole_column_names`
    when the error is a syntax error at a piece of a column name; `moved_columns` when a column was
    looked for in a table of the query that lacks it. [] otherwise."""
    split = catalog.split_column(error, sql)
    if split is not None:
        piece, columns = split
        return whole_column_names(sql, piece, columns[:SPLIT_COLUMNS_TRIED])
    return moved_columns(sql, error, catalog, links)


_NOT_IN_TABLE = re.compile(r'Table "((?:[^"]|"")+)" does not have a column named "((?:[^"]|"")+)"')
_QUOTED = re.compile(r'\s*[:,]?\s*"((?:[^"]|"")+)"')


def moved_columns(sql: str, error: str, catalog: Catalog,
                  links: QuestionLinks | None = None) -> list[tuple[str, str]]:
    """`sql` with `alias.column`, which DuckDB did not find in that alias's table, rewritten: the column
    taken from the query's other table that has it (`T1.所属集团`), and, before it, the alias's own column
    DuckDB offers in its place ("Candidate bindings") when the question linking links that column (the
    question's 开发 in 集团开发商). [] when the error is another or the column is in no other table of
    the query."""
    missing = _NOT_IN_TABLE.search(error)
    if missing is None:
        return []
    alias, column = (g.replace('""', '"') for g in missing.groups())
    tables = _query_tables(sql, catalog)
    table = tables.get(alias.casefold())
    if table is None:
        return []
    homes = [a for a, t in tables.items() if a != alias.casefold()
             and any(c.casefold() == column.casefold() for c in catalog.column_names(t, load=False) or [])]
    if not homes:  # a column no table of the query has: DuckDB's offer is a guess by spelling alone
        return []
    found: list[tuple[str, str]] = []
    home = homes[0]
    variant = _requalified(sql, alias, column, home_alias=_written_alias(sql, home), new_column=None)
    if variant is not None:
        found.append((variant, f"{column} taken from {tables[home]}, the query's table that has it"))
    # DuckDB's offer is a guess by spelling (dev-en academic_7: `citing` for citation_num, a wrong answer
    # that passed every check): taken only when the question linking links that column, and then first.
    own = {c.casefold(): c for c in catalog.column_names(table, load=False) or []}
    linked = {c.casefold() for t, c in (links.columns if links is not None else ()) if t == table}
    offered = [own[key] for key in (_bare(name, tables).casefold() for name in _offered(error))
               if key in own and key in linked]
    if offered:
        variant = _requalified(sql, alias, column, home_alias=None, new_column=offered[0])
        if variant is not None:
            found.insert(0, (variant, f"{alias}.{offered[0]}, the column of {table} DuckDB offers and the question "
                                      f"names, for {alias}.{column}"))
    return found


def _offered(error: str) -> list[str]:
    """The names after DuckDB's "Candidate bindings:", in its order."""
    at = error.find("Candidate bindings:")
    if at < 0:
        return []
    names, i = [], at + len("Candidate bindings:")
    while (quoted := _QUOTED.match(error, i)) is not None:
        names.append(quoted.group(1).replace('""', '"'))
        i = quoted.end()
    return names


def _bare(name: str, tables: dict[str, str]) -> str:
    """A candidate binding without its `alias.` or `table.` prefix."""
    head, dot, rest = name.partition(".")
    return rest if dot and (head.casefold() in tables or head.casefold() in {t.casefold() for t in tables.values()}) else name


def _query_tables(sql: str, catalog: Catalog) -> dict[str, str]:
    """{alias or name, case-folded: catalog table} for each catalog table the query reads."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError:
        return {}
    found: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        try:
            name = catalog.resolve(table.name)
        except DataError:
            continue
        found[table.alias_or_name.casefold()] = name
    return found


def _written_alias(sql: str, alias: str) -> str:
    """`alias` (case-folded) as the query writes it."""
    for token in significant(tokenize(sql)):
        if _unquoted(token).casefold() == alias:
            return token.text
    return quote_ident(alias)


def _requalified(sql: str, alias: str, column: str, *, home_alias: str | None, new_column: str | None) -> str | None:
    """`sql` with each `alias.column` (bare or double-quoted parts) given another alias or another column;
    None when the query has no such reference."""
    tokens = significant(tokenize(sql))
    out, last, changed = [], 0, False
    for i in range(len(tokens) - 2):
        first, dot, name = tokens[i], tokens[i + 1], tokens[i + 2]
        if (dot.text == "." and first.kind in _NAMES and name.kind in _NAMES
                and _unquoted(first).casefold() == alias.casefold() and _unquoted(name).casefold() == column.casefold()):
            if home_alias is not None:
                out += [sql[last:first.start], home_alias]
                last = first.end
            else:
                out += [sql[last:name.start], quote_ident(new_column or column)]
                last = name.end
            changed = True
    return "".join(out) + sql[last:] if changed else None


_NAMES = ("word", "ident", "backtick")


def _unquoted(token: Token) -> str:
    return unquote(token) if token.kind in ("ident", "backtick") else token.text


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
