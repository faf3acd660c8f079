"""Whole-column type inference for text columns: every value is checked, never only a sample.

A bad value on row 900,000 turns the column into text instead of failing the load. Rules, in order:
  no non-blank value → VARCHAR; any integer with a leading zero (`007`) → VARCHAR (codes);
  all integers within int64 → BIGINT; all decimals → DOUBLE; all `YYYY-MM-DD` or `YYYY/MM/DD`
  → DATE; all ISO date-times (or dates) → TIMESTAMP; all true/false → BOOLEAN; all `31.12.1952`
  (dots, year last: always day first) → DATE; all `13/01/2012` (slashes, year last) → DATE when
  the values settle the order (some read only day-first, or only month-first), else text with a
  note naming the strptime format; in a `;`-delimited file, all numbers written with decimal commas
  (`5,1`, `1.234,5`) → DOUBLE, all integers with thousands points (`8.425.333`, one at least not a
  plain number) → BIGINT; else VARCHAR (verbatim).
Blank strings become NULL only in columns that turn numeric/temporal/boolean.

How, cheaply (`materialize_from`): the rules run on the first `SAMPLE_ROWS` rows. A column the sample
shows is text is text (each rule needs every value). For the others the sample's type is a guess,
checked on every value while the table is written: a value in its canonical form (`12`, `2024-01-02`,
`12.5`) passes a cast or one regular expression, anything else the full rules; a value the guess
does not fit stops the write, and the whole-column counts (`column_stats`) decide instead. On a
1.7M-row CSV the counts cost ~18 CPU-s, the checked write ~2.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import duckdb

from datasolver.data.load_notes import DATE_STYLE, DECIMAL_COMMA, TEXT_COLUMN
from datasolver.data.names import quote_ident

if TYPE_CHECKING:
    import pyarrow as pa

_INT = r"[+-]?\d+"
_LEADING_ZERO = r"[+-]?0\d+(\.\d*)?"
_NUM = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
_DATE = r"\d{4}-\d{2}-\d{2}|\d{4}/\d{1,2}/\d{1,2}"  # DuckDB casts both to DATE
_TS = r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?"
# A number with decimal commas and optional thousands points, no leading zero: 5,1  0,25  1.234,5  1234
_DECIMAL_COMMA = r"[+-]?(0|[1-9]\d*|[1-9]\d{0,2}(\.\d{3})+)(,\d+)?"
# The same without a decimal part: an integer with optional thousands points (8.425.333).
_THOUSANDS = r"[+-]?(0|[1-9]\d*|[1-9]\d{0,2}(\.\d{3})+)"
# Dates with the year last: dots (always day first), slashes (either order; the values decide).
_DOT_DATE = r"\d{1,2}\.\d{1,2}\.\d{4}"
_SLASH_DATE = r"\d{1,2}/\d{1,2}/\d{4}"
# A decimal in its plain form, no leading zero, at most 18 integer digits (never past int64).
_PLAIN_NUM = r"[+-]?(0|[1-9]\d{0,17})(\.\d*)?([eE][+-]?\d+)?|[+-]?\.\d+([eE][+-]?\d+)?"

_CHECKS = {
    "nonblank": "v <> ''",
    "int": f"regexp_full_match(v, '{_INT}')",
    "int_overflow": f"regexp_full_match(v, '{_INT}') AND TRY_CAST(v AS BIGINT) IS NULL",
    "leading_zero": f"regexp_full_match(v, '{_LEADING_ZERO}')",
    "num": f"regexp_full_match(v, '{_NUM}') AND TRY_CAST(v AS DOUBLE) IS NOT NULL",
    "date": f"regexp_full_match(v, '{_DATE}') AND TRY_CAST(v AS DATE) IS NOT NULL",
    "ts": f"regexp_full_match(v, '{_TS}') AND TRY_CAST(v AS TIMESTAMP) IS NOT NULL",
    "bool": "lower(v) IN ('true', 'false')",
    "comma": f"regexp_full_match(v, '{_DECIMAL_COMMA}') AND contains(v, ',')",
    "comma_ok": f"regexp_full_match(v, '{_DECIMAL_COMMA}')",
    "thousands": f"regexp_full_match(v, '{_THOUSANDS}') AND TRY_CAST(replace(v, '.', '') AS BIGINT) IS NOT NULL",
    "dot_dmy": f"regexp_full_match(v, '{_DOT_DATE}') AND try_strptime(v, '%d.%m.%Y') IS NOT NULL",
    "slash": f"regexp_full_match(v, '{_SLASH_DATE}')",
    "slash_dmy": f"regexp_full_match(v, '{_SLASH_DATE}') AND try_strptime(v, '%d/%m/%Y') IS NOT NULL",
    "slash_mdy": f"regexp_full_match(v, '{_SLASH_DATE}') AND try_strptime(v, '%m/%d/%Y') IS NOT NULL",
}

# A character no check accepts, even after trim(): not a digit, sign, point, colon, slash, e/E, T
# or a letter of true/false (lower() maps no other character onto those), and not a space separator
# (Unicode Zs: what DuckDB's trim() strips, measured on DuckDB 2.0.1).
_NEVER_TYPED = r"[^0-9+\-.:/eEtTrRuUfFaAlLsS\p{Zs}]"
# Only a column's first values are looked at: enough to settle most text columns, bounded cost.
_SURELY_TEXT_HEAD = 1000
COMMA_DOUBLE = "DOUBLE (decimal comma)"
THOUSANDS_BIGINT = "BIGINT (thousands points)"
DATE_DOT_DMY = "DATE (day.month.year)"
DATE_SLASH_DMY = "DATE (day/month/year)"
DATE_SLASH_MDY = "DATE (month/day/year)"
# How each of these kinds turns a trimmed, non-blank value `t` (which its check accepted) into its type.
_CONVERT = {
    COMMA_DOUBLE: "CAST(replace(replace(t, '.', ''), ',', '.') AS DOUBLE)",
    THOUSANDS_BIGINT: "CAST(replace(t, '.', '') AS BIGINT)",
    DATE_DOT_DMY: "CAST(strptime(t, '%d.%m.%Y') AS DATE)",
    DATE_SLASH_DMY: "CAST(strptime(t, '%d/%m/%Y') AS DATE)",
    DATE_SLASH_MDY: "CAST(strptime(t, '%m/%d/%Y') AS DATE)",
}
_FORMATS = {DATE_SLASH_DMY: "%d/%m/%Y", DATE_SLASH_MDY: "%m/%d/%Y"}
SAMPLE_ROWS = 5000
# Past this many columns the checked write is not tried: its per-column CASE expressions make
# DuckDB's planning superlinear in the width (the whole-column counts unpivot instead).
GUESS_MAX_COLUMNS = 200
GUESS_FAILED = "datasolver: the type guessed for a column does not fit a value: "


def decide_type(stats: dict[str, int], decimal_comma: bool = False) -> str:
    """The DuckDB type for one text column from its counts (see module docstring); COMMA_DOUBLE,
    THOUSANDS_BIGINT and the DATE_ kinds stand for a type written in that style. A column of
    slash dates each of which reads both day-first and month-first is _AMBIGUOUS_DATES (text,
    unless later values settle the order)."""
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
    if stats["dot_dmy"] == n:
        return DATE_DOT_DMY
    if stats["slash"] == n:
        day_first, month_first = stats["slash_dmy"] == n, stats["slash_mdy"] == n
        if day_first != month_first:
            return DATE_SLASH_DMY if day_first else DATE_SLASH_MDY
        if day_first:
            return _AMBIGUOUS_DATES
    if decimal_comma and stats["comma_ok"] == n and stats["comma"]:
        return COMMA_DOUBLE
    if decimal_comma and stats["thousands"] == n and stats["num"] < n:
        return THOUSANDS_BIGINT
    return "VARCHAR"


_AMBIGUOUS_DATES = "VARCHAR (ambiguous dates)"


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




def surely_text(column: pa.ChunkedArray | pa.Array, decimal_comma: bool = False) -> bool:
    """True when one of the column's first values holds a character no check accepts (a CJK
    character, most letters): the column is VARCHAR whatever the rest holds, so DuckDB need not
    check it. Planning the check query costs ~4 ms a table; 105 of the 291 dev tables with text
    columns need none. A comma is accepted too where numbers may have decimal commas."""
    import pyarrow as pa  # only here, where a source is read (a query on cached tables needs no pyarrow)
    import pyarrow.compute as pc

    if not pa.types.is_string(column.type) and not pa.types.is_large_string(column.type):
        return False
    head = column.slice(0, _SURELY_TEXT_HEAD)
    pattern = _never_typed(decimal_comma)
    return bool(pc.any(pc.match_substring_regex(head, pattern)).as_py())


def _never_typed(decimal_comma: bool) -> str:
    """The character class no typed value holds (a comma allowed where numbers may have decimal commas)."""
    return _NEVER_TYPED.replace("]", ",]", 1) if decimal_comma else _NEVER_TYPED


def _sub(condition: str, value: str) -> str:
    # The placeholder `v` stands alone; regexes and keywords in the checks contain no bare `v`.
    return re.sub(r"\bv\b", lambda _: value, condition)


@dataclass
class Typing:
    """What inference decided for a table's text columns, and what it has to say about them."""

    types: dict[str, str] = field(default_factory=dict)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (kind, text)
    guessed: bool = False
    """True when the sample's guess held for every value (no whole-column counts were needed)."""


def is_guess_failure(exc: BaseException) -> bool:
    """Whether a DuckDB error is the checked write stopping on a value its guess does not fit (or
    any conversion the guess relied on failing): the whole-column counts then decide."""
    return isinstance(exc, duckdb.Error) and not isinstance(exc, duckdb.InterruptException) and (
        GUESS_FAILED in str(exc) or isinstance(exc, duckdb.ConversionException))


def materialize(conn: duckdb.DuckDBPyConnection, target: str, table: pa.Table, infer: list[str],
                decimal_comma: bool = False) -> Typing:
    """CREATE TABLE target from an Arrow table, inferring types of the `infer` columns."""
    staging = f"__staging_{abs(hash(target))}"
    conn.register(staging, table)
    try:
        return materialize_from(conn, target, quote_ident(staging), list(table.column_names), infer,
                                decimal_comma=decimal_comma, rows=table.num_rows)
    finally:
        conn.unregister(staging)


def materialize_from(conn: duckdb.DuckDBPyConnection, target: str, relation: str, columns: list[str],
                     infer: list[str], decimal_comma: bool = False, rows: int | None = None) -> Typing:
    """CREATE TABLE target AS the `relation` (a table, view or table function such as
    `read_csv(…)`) with its `infer` columns typed by the rules (see the module docstring).
    `rows`, when known, lets a table no larger than the sample skip the guess."""
    sample = conn.sql(f"SELECT * FROM {relation} LIMIT {SAMPLE_ROWS + 1}").to_arrow_table()
    whole = sample.num_rows <= SAMPLE_ROWS if rows is None else rows <= SAMPLE_ROWS
    sample = sample.slice(0, SAMPLE_ROWS)
    infer = [c for c in infer if c in columns]
    guesses, sample_stats = _guess(conn, sample, infer, decimal_comma)
    if whole:
        _create(conn, target, relation, columns, guesses)
        typing = Typing(guesses, guessed=True)
        typing.notes = _notes(conn, target, guesses, sample_stats, whole_stats=True)
        return typing
    if len(columns) > GUESS_MAX_COLUMNS:
        return _by_counts(conn, target, relation, columns, guesses, decimal_comma)
    try:
        conn.execute(f"CREATE TABLE {quote_ident(target)} AS SELECT {_checked_select(columns, guesses)} FROM {relation}")
        typing = Typing(guesses, guessed=True)
        typing.notes = _notes(conn, target, guesses, sample_stats, whole_stats=False)
        return typing
    except duckdb.Error as exc:
        if not is_guess_failure(exc):
            raise
    conn.execute(f"DROP TABLE IF EXISTS {quote_ident(target)}")
    return _by_counts(conn, target, relation, columns, guesses, decimal_comma)


def checked_relation(conn: duckdb.DuckDBPyConnection, relation: str, columns: list[str], infer: list[str],
                     decimal_comma: bool = False) -> str:
    """A query over `relation` that gives its `infer` columns the types the sample suggests,
    checking every value as it is read (GUESS_FAILED on one that does not fit): a table's typed
    view before it is loaded. A table wider than GUESS_MAX_COLUMNS has none (ValueError)."""
    if len(columns) > GUESS_MAX_COLUMNS:
        raise ValueError(f"{len(columns)} columns: too wide to type while it is read")
    infer = [c for c in infer if c in columns]
    # The sample stays in DuckDB (a temporary table: the file's head read once; no Arrow, so no
    # pyarrow import on the way to a first answer).
    sample = quote_ident(f"__sample_{secrets.token_hex(6)}")
    conn.execute(f"CREATE TEMP TABLE {sample} AS SELECT * FROM {relation} LIMIT {SAMPLE_ROWS}")
    try:
        text = _surely_text_columns(conn, sample, infer, decimal_comma)
        stats = column_stats(conn, sample, [c for c in infer if c not in text])
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {sample}")
    guesses = _decide(infer, text, stats, decimal_comma)
    return f"SELECT {_checked_select(columns, guesses)} FROM {relation}"


def _surely_text_columns(conn: duckdb.DuckDBPyConnection, relation: str, columns: list[str],
                         decimal_comma: bool) -> set[str]:
    """`surely_text` for each text column of `relation`, in one DuckDB query over its first
    _SURELY_TEXT_HEAD rows (RE2 in both, so the same pattern says the same)."""
    shape = conn.sql(f"SELECT * FROM {relation} LIMIT 0")
    types = {name: str(kind) for name, kind in zip(shape.columns, shape.types)}
    named = [c for c in columns if types.get(c) == "VARCHAR"]
    if not named:
        return set()
    pattern = _never_typed(decimal_comma).replace("'", "''")
    tests = ", ".join(f"coalesce(bool_or(regexp_matches({quote_ident(c)}, '{pattern}')), false)" for c in named)
    (row,) = conn.execute(f"SELECT {tests} FROM (SELECT * FROM {relation} LIMIT {_SURELY_TEXT_HEAD})").fetchall()
    return {c for c, hit in zip(named, row) if hit}


def _guess(conn: duckdb.DuckDBPyConnection, sample: pa.Table, infer: list[str],
           decimal_comma: bool) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Each inferred column's type on the sample (text columns settled by their first values skip
    the counts), and the sample's counts."""
    name = f"__sample_{abs(hash(tuple(infer)))}"
    text = {c for c in infer if sample.schema.get_field_index(c) >= 0
            and surely_text(sample.column(c), decimal_comma)}
    conn.register(name, sample)
    try:
        stats = column_stats(conn, quote_ident(name), [c for c in infer if c not in text])
    finally:
        conn.unregister(name)
    return _decide(infer, text, stats, decimal_comma), stats


def _decide(infer: list[str], text: set[str], stats: dict[str, dict[str, int]], decimal_comma: bool) -> dict[str, str]:
    """Each inferred column's type: text where its first values said so, else by the sample's counts."""
    guesses = {c: "VARCHAR" if c in text else decide_type(stats[c], decimal_comma) for c in infer}
    for column in infer:
        if column not in text and stats[column]["nonblank"] == 0:
            guesses[column] = _UNKNOWN
    return guesses


_UNKNOWN = "unknown"  # no non-blank value in the sample: text unless a later value says otherwise


def _create(conn: duckdb.DuckDBPyConnection, target: str, relation: str, columns: list[str],
            chosen: dict[str, str]) -> None:
    """CREATE TABLE with the types decided from whole-column counts (every value already checked)."""
    select = []
    for column in columns:
        ident = quote_ident(column)
        kind = chosen.get(column, "KEEP")
        if kind in ("KEEP", "VARCHAR", _UNKNOWN, _AMBIGUOUS_DATES):
            select.append(ident)
        elif kind in _CONVERT:
            # Every non-blank value passed this kind's check: only blanks need guarding.
            trimmed = f"trim({ident})"
            convert = re.sub(r"\bt\b", lambda _: trimmed, _CONVERT[kind])
            select.append(f"CASE WHEN {trimmed} = '' THEN NULL ELSE {convert} END AS {ident}")
        else:
            # Every non-blank value passed this type's TRY_CAST in the stats, so TRY_CAST only
            # turns blanks into NULL. (CAST(NULLIF(trim(x), '') …) said the same, but DuckDB's
            # common-subexpression pass made it quadratic in the width: 5,000 columns took 90 s.)
            select.append(f"TRY_CAST(trim({ident}) AS {kind}) AS {ident}")
    conn.execute(f"CREATE TABLE {quote_ident(target)} AS SELECT {', '.join(select)} FROM {relation}")


# For a guessed type: (SQL true for a value in its canonical form, the full rule for any other value).
# `v` is the raw value, `t` the trimmed one; both conditions imply every rule the type needs.
_FAST = {
    "BIGINT": "CAST(TRY_CAST(v AS BIGINT) AS VARCHAR) = v",
    "DOUBLE": f"regexp_full_match(v, '{_PLAIN_NUM}')",
    "DATE": "CAST(TRY_CAST(v AS DATE) AS VARCHAR) = v",
    "TIMESTAMP": "CAST(TRY_CAST(v AS TIMESTAMP) AS VARCHAR) = v",
    "BOOLEAN": "lower(v) IN ('true', 'false')",
}
_FULL = {
    "BIGINT": f"regexp_full_match(t, '{_INT}') AND NOT regexp_full_match(t, '{_LEADING_ZERO}') "
              "AND TRY_CAST(t AS BIGINT) IS NOT NULL",
    "DOUBLE": f"regexp_full_match(t, '{_NUM}') AND NOT regexp_full_match(t, '{_LEADING_ZERO}') "
              f"AND NOT (regexp_full_match(t, '{_INT}') AND TRY_CAST(t AS BIGINT) IS NULL)",
    "DATE": f"regexp_full_match(t, '{_DATE}') AND TRY_CAST(t AS DATE) IS NOT NULL",
    "TIMESTAMP": f"regexp_full_match(t, '{_TS}') AND TRY_CAST(t AS TIMESTAMP) IS NOT NULL",
    "BOOLEAN": "lower(t) IN ('true', 'false')",
    COMMA_DOUBLE: f"regexp_full_match(t, '{_DECIMAL_COMMA}')",
    THOUSANDS_BIGINT: _sub(_CHECKS["thousands"], "t"),
    DATE_DOT_DMY: _sub(_CHECKS["dot_dmy"], "t"),
    DATE_SLASH_DMY: _sub(_CHECKS["slash_dmy"], "t"),
    DATE_SLASH_MDY: _sub(_CHECKS["slash_mdy"], "t"),
}


def _checked_select(columns: list[str], guesses: dict[str, str]) -> str:
    """The select list of a write that checks each guessed value and converts it; a value its
    guess does not fit raises GUESS_FAILED (the column named) and stops the write."""
    parts = []
    for column in columns:
        ident = quote_ident(column)
        kind = guesses.get(column, "KEEP")
        fail = f"error({_literal(GUESS_FAILED + column)})"
        if kind in ("KEEP", "VARCHAR"):
            parts.append(ident)
            continue
        if kind in (_UNKNOWN, _AMBIGUOUS_DATES):  # only the whole column's counts can settle it
            parts.append(f"CASE WHEN {ident} IS NULL OR trim({ident}) = '' THEN {ident} ELSE {fail} END AS {ident}")
            continue
        trimmed = f"trim({ident})"
        convert = (re.sub(r"\bt\b", lambda _: trimmed, _CONVERT[kind]) if kind in _CONVERT
                   else f"CAST({trimmed} AS {kind})")
        fast = f"WHEN {_sub(_FAST[kind], ident)} THEN CAST({ident} AS {kind}) " if kind in _FAST else ""
        full = re.sub(r"\bt\b", lambda _: trimmed, _FULL[kind])
        parts.append(f"CASE WHEN {ident} IS NULL THEN NULL {fast}WHEN {trimmed} = '' THEN NULL "
                     f"WHEN {full} THEN {convert} ELSE {fail} END AS {ident}")
    return ", ".join(parts)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _by_counts(conn: duckdb.DuckDBPyConnection, target: str, relation: str, columns: list[str],
               guesses: dict[str, str], decimal_comma: bool) -> Typing:
    """The exact path: whole-column counts of the columns the sample could not settle, then the write."""
    staged = f"__counted_{abs(hash(target))}"
    conn.execute(f"CREATE TEMP TABLE {quote_ident(staged)} AS SELECT * FROM {relation}")
    try:
        open_columns = [c for c, kind in guesses.items() if kind != "VARCHAR"]
        stats = column_stats(conn, quote_ident(staged), open_columns)
        chosen = dict(guesses)
        for column in open_columns:
            chosen[column] = decide_type(stats[column], decimal_comma)
        _create(conn, target, quote_ident(staged), columns, chosen)
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {quote_ident(staged)}")
    typing = Typing(chosen)
    typing.notes = _notes(conn, target, chosen, stats, whole_stats=True)
    return typing


_DATE_NOTES = {
    DATE_DOT_DMY: "dates written day.month.year read as dates (31.12.1952 → 1952-12-31)",
    DATE_SLASH_DMY: "dates written day/month/year read as dates (a day past 12 comes first: 13/01/2012 → 2012-01-13)",
    DATE_SLASH_MDY: "dates written month/day/year read as dates (a day past 12 comes second: 01/13/2012 → 2012-01-13)",
}
MOSTLY = 0.5  # a text column whose values are at least this share numbers (or dates) gets a note


def _notes(conn: duckdb.DuckDBPyConnection, target: str, chosen: dict[str, str],
           stats: dict[str, dict[str, int]], whole_stats: bool) -> list[tuple[str, str]]:
    """What a person should know about the columns' types: decimal commas read as numbers, and
    text columns that look typed (leading zeros, integers past 64 bits, mostly numbers or dates).
    `stats` are whole-column counts or, when not `whole_stats`, the sample's; counts in the
    notes are always whole-column ones."""
    notes = []
    table = quote_ident(target)
    for column, kind in chosen.items():
        counts = stats.get(column)
        ident = quote_ident(column)
        if kind == COMMA_DOUBLE:
            notes.append((DECIMAL_COMMA, f"column {column!r}: numbers written with decimal commas read as numbers "
                                         "(5,1 → 5.1; 1.234,5 → 1234.5)"))
        if kind == THOUSANDS_BIGINT:
            notes.append((DECIMAL_COMMA, f"column {column!r}: numbers written with thousands points read as numbers "
                                         "(8.425.333 → 8425333)"))
        if kind in _DATE_NOTES:
            notes.append((DATE_STYLE, f"column {column!r}: {_DATE_NOTES[kind]}"))
        if kind == _AMBIGUOUS_DATES:
            example = _first(conn, table, ident, f"trim({ident}) <> ''")
            formats = " or ".join(f"strptime({column}, '{f}')" for f in _FORMATS.values())
            notes.append((TEXT_COLUMN, f"column {column!r} left as text: each date (e.g. {example!r}) reads day-first "
                                       f"and month-first; {formats} reads it as one"))
        if kind != "VARCHAR" or not counts or not counts["nonblank"]:
            continue
        if counts["leading_zero"]:
            example = _first(conn, table, ident, f"regexp_full_match(trim({ident}), '{_LEADING_ZERO}')")
            notes.append((TEXT_COLUMN, f"column {column!r} kept as text: values with leading zeros stay exact "
                                       f"(e.g. {example!r})"))
        elif counts["int_overflow"] and counts["int"] == counts["nonblank"]:
            notes.append((TEXT_COLUMN, f"column {column!r} kept as text: integers too large for 64 bits stay exact"))
        elif max(counts["num"], counts["ts"]) >= MOSTLY * counts["nonblank"]:
            what, check = ("numbers", _FULL["DOUBLE"]) if counts["num"] >= counts["ts"] else \
                ("dates or times", _FULL["TIMESTAMP"])
            check = re.sub(r"\bt\b", lambda _: f"trim({ident})", check)
            total, odd, example = conn.execute(
                f"SELECT count(*) FILTER (WHERE trim({ident}) <> ''), "
                f"count(*) FILTER (WHERE trim({ident}) <> '' AND NOT ({check})), "
                f"first({ident}) FILTER (WHERE trim({ident}) <> '' AND NOT ({check})) FROM {table}").fetchall()[0]
            if odd:
                notes.append((TEXT_COLUMN, f"column {column!r} left as text: {odd:,} of {total:,} values are not "
                                           f"{what} (e.g. {example!r})"))
    return notes


def _first(conn: duckdb.DuckDBPyConnection, table: str, ident: str, condition: str) -> str | None:
    rows = conn.execute(f"SELECT {ident} FROM {table} WHERE {condition} LIMIT 1").fetchall()
    return rows[0][0] if rows else None
