"""Whole-column type inference for text columns, done in one DuckDB pass per table.

Every value of a column is checked (never a sample), so a bad value on row 900,000 turns the
column into text instead of failing the load. Rules, in order:
  no non-blank value → VARCHAR; any integer with a leading zero (`007`) → VARCHAR (codes);
  all integers within int64 → BIGINT; all decimals → DOUBLE; all `YYYY-MM-DD` → DATE;
  all ISO date-times (or dates) → TIMESTAMP; all true/false → BOOLEAN; else VARCHAR (kept verbatim).
Blank strings become NULL only in columns that turn numeric/temporal/boolean.
"""

from __future__ import annotations

import re

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from datasolver.data.names import quote_ident

_INT = r"[+-]?\d+"
_LEADING_ZERO = r"[+-]?0\d+(\.\d*)?"
_NUM = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
_DATE = r"\d{4}-\d{2}-\d{2}"
_TS = r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?"

_CHECKS = {
    "nonblank": "v <> ''",
    "int": f"regexp_full_match(v, '{_INT}')",
    "int_overflow": f"regexp_full_match(v, '{_INT}') AND TRY_CAST(v AS BIGINT) IS NULL",
    "leading_zero": f"regexp_full_match(v, '{_LEADING_ZERO}')",
    "num": f"regexp_full_match(v, '{_NUM}') AND TRY_CAST(v AS DOUBLE) IS NOT NULL",
    "date": f"regexp_full_match(v, '{_DATE}') AND TRY_CAST(v AS DATE) IS NOT NULL",
    "ts": f"regexp_full_match(v, '{_TS}') AND TRY_CAST(v AS TIMESTAMP) IS NOT NULL",
    "bool": "lower(v) IN ('true', 'false')",
}

# A character no check accepts, even after trim(): not a digit, sign, point, colon, e/E, T or a
# letter of true/false (lower() maps no other character onto those), and not a space separator
# (Unicode Zs: what DuckDB's trim() strips, measured on DuckDB 2.0.1).
_NEVER_TYPED = r"[^0-9+\-.:eEtTrRuUfFaAlLsS\p{Zs}]"
# Only a column's first values are looked at: enough to settle most text columns, bounded cost.
_SURELY_TEXT_HEAD = 1000


def decide_type(stats: dict[str, int]) -> str:
    """The DuckDB type for one text column from its counts (see module docstring)."""
    n = stats["nonblank"]
    if n == 0 or stats["leading_zero"]:
        return "VARCHAR"
    if stats["int"] == n and not stats["int_overflow"]:
        return "BIGINT"
    if stats["num"] == n and not stats["int_overflow"]:
        return "DOUBLE"
    if stats["date"] == n:
        return "DATE"
    if stats["ts"] == n:
        return "TIMESTAMP"
    if stats["bool"] == n:
        return "BOOLEAN"
    return "VARCHAR"


def column_stats(conn: duckdb.DuckDBPyConnection, relation: str, columns: list[str]) -> dict[str, dict[str, int]]:
    """Counts of each check for each column, in a single scan of the unpivoted columns.

    The columns are unpivoted into (column, value) pairs and grouped, so the query holds each
    check once whatever the width. One aggregate per column and check instead grew superlinearly
    with the width (a 300-column, 5-row table took 4.5 GB and 46 s; see tests/test_hostile_files.py).
    """
    if not columns:
        return {}
    select = ", ".join(quote_ident(c) for c in columns)
    parts = [f"count(*) FILTER (WHERE {_sub(condition, 'trim(v)')}) AS {check}" for check, condition in _CHECKS.items()]
    rows = conn.execute(
        f"SELECT name, {', '.join(parts)} "
        f"FROM (UNPIVOT (SELECT {select} FROM {relation}) ON COLUMNS(*) INTO NAME name VALUE v) GROUP BY name"
    ).fetchall()
    found = {row[0]: dict(zip(_CHECKS, row[1:])) for row in rows}
    empty = dict.fromkeys(_CHECKS, 0)  # UNPIVOT drops NULLs: an all-NULL column has no group
    return {column: found.get(column, dict(empty)) for column in columns}


def surely_text(column: pa.ChunkedArray) -> bool:
    """True when one of the column's first values holds a character no check accepts (a CJK
    character, most letters): the column is VARCHAR whatever the rest holds, so DuckDB need not
    check it. Planning the check query costs ~4 ms a table; 105 of the 291 dev tables with text
    columns need none."""
    if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
        return False
    head = column.slice(0, _SURELY_TEXT_HEAD)
    return bool(pc.any(pc.match_substring_regex(head, _NEVER_TYPED)).as_py())


def _sub(condition: str, value: str) -> str:
    # The placeholder `v` stands alone; regexes and keywords in the checks contain no bare `v`.
    return re.sub(r"\bv\b", lambda _: value, condition)


def materialize(conn: duckdb.DuckDBPyConnection, target: str, table: pa.Table, infer: list[str]) -> dict[str, str]:
    """CREATE TABLE target from an Arrow table, inferring types of the `infer` columns.

    Returns the chosen type per inferred column.
    """
    staging = f"__staging_{abs(hash(target))}"
    conn.register(staging, table)
    try:
        # (A name held twice cannot be looked up: such a column keeps the DuckDB check.)
        text = {c for c in infer if table.schema.get_field_index(c) >= 0 and surely_text(table.column(c))}
        stats = column_stats(conn, quote_ident(staging), [c for c in infer if c not in text])
        chosen = {column: "VARCHAR" if column in text else decide_type(stats[column]) for column in infer}
        select = []
        for column in table.column_names:
            ident = quote_ident(column)
            kind = chosen.get(column, "KEEP")
            if kind in ("KEEP", "VARCHAR"):
                select.append(ident)
            else:
                # Every non-blank value passed this type's TRY_CAST in the stats, so TRY_CAST only
                # turns blanks into NULL. (CAST(NULLIF(trim(x), '') …) said the same, but DuckDB's
                # common-subexpression pass made it quadratic in the width: 5,000 columns took 90 s.)
                select.append(f"TRY_CAST(trim({ident}) AS {kind}) AS {ident}")
        conn.execute(f"CREATE TABLE {quote_ident(target)} AS SELECT {', '.join(select)} FROM {quote_ident(staging)}")
    finally:
        conn.unregister(staging)
    return chosen
