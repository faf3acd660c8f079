"""Mistakes real models make, made on purpose: each turns a right SQL answer into the wrong
query-area code that one answer check names. The fallible scripted model writes it first and
fixes it when told (`ScriptedAnswer.with_mistake`).

Each maker returns code or None when the mistake does not apply to that answer (no string
filter to misspell, no numeric column to decorate …). They read the right answer's columns and
rows from the catalog, as a model that had run it would know them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from datasolver.data import Catalog
from datasolver.data.names import quote_ident, quote_literal
from datasolver.data.question_shape import RANK_WORDS, ROUNDING_WORDS, mentions
from datasolver.solver.scaffold import query_code

_NUMERIC = ("INT", "DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMERIC")


@dataclass(frozen=True)
class RightAnswer:
    """The right SQL and what it returns."""

    question: str
    sql: str
    columns: list[str]
    types: list[str]
    rows: list[tuple]


Maker = Callable[[RightAnswer], "str | None"]


def right_answer(catalog: Catalog, question: str, sql: str) -> RightAnswer:
    result = catalog.query(sql, limit=10_000)
    return RightAnswer(question, sql, list(result.columns), [str(t).upper() for t in result.types], result.rows)


def helper_column(answer: RightAnswer) -> str | None:
    if mentions(answer.question, RANK_WORDS) or not answer.rows:
        return None
    return query_code(f"SELECT row_number() OVER () AS rn, * FROM ({answer.sql}) AS answer")


def constant_column(answer: RightAnswer) -> str | None:
    literal = _first_string_filter(answer.sql)
    if literal is None or not answer.rows:
        return None
    return query_code(f"SELECT *, {quote_literal(literal)} AS filter_value FROM ({answer.sql}) AS answer")


def duplicate_rows(answer: RightAnswer) -> str | None:
    if not answer.rows:
        return None
    return query_code(f"SELECT * FROM ({answer.sql}) AS a UNION ALL SELECT * FROM ({answer.sql}) AS b")


def empty_result(answer: RightAnswer) -> str | None:
    tree = _parse(answer.sql)
    if tree is None or not answer.rows:
        return None
    for eq in tree.find_all(exp.EQ):
        literal = eq.expression if isinstance(eq.expression, exp.Literal) else None
        if literal is not None and literal.is_string and len(literal.name) >= 3 and eq.find_ancestor(exp.Where):
            literal.replace(exp.Literal.string(literal.name[:-1]))  # a truncated name: matches nothing
            return query_code(tree.sql(dialect="duckdb"))
    return None


def all_null_column(answer: RightAnswer) -> str | None:
    if not answer.rows:
        return None
    return query_code(f"SELECT *, CAST(NULL AS VARCHAR) AS joined_value FROM ({answer.sql}) AS answer")


def literal_answer(answer: RightAnswer) -> str | None:
    """Values typed in from a preview: the first 5 rows, the last text cell misspelt."""
    if not answer.rows or not all(isinstance(v, (str, int, float)) for r in answer.rows[:5] for v in r):
        return None  # a value without a Python literal (a date, NULL) would not be typed like this
    rows = [list(r) for r in answer.rows[:5]]
    text_cells = [(i, j) for i, row in enumerate(rows) for j, v in enumerate(row) if isinstance(v, str)]
    if text_cells:
        i, j = text_cells[-1]
        rows[i][j] = rows[i][j] + "x"
    elif len(answer.rows) <= 5:
        return None  # a short all-numeric answer copied exactly is right: no mistake to make
    data = {name: [row[k] for row in rows] for k, name in enumerate(answer.columns)}
    return f"result = pd.DataFrame({data!r})"


def text_numbers(answer: RightAnswer) -> str | None:
    index = next((k for k, t in enumerate(answer.types) if any(n in t for n in _NUMERIC)), None)
    if index is None or not answer.rows:
        return None
    return query_code(_wrap(answer, index, "CAST({c} AS VARCHAR) || '%'"))


def early_rounding(answer: RightAnswer) -> str | None:
    if mentions(answer.question, ROUNDING_WORDS):
        return None
    index = next((k for k, t in enumerate(answer.types) if any(n in t for n in _NUMERIC)), None)
    if index is None or not answer.rows:
        return None
    return query_code(_wrap(answer, index, "ROUND({c}, 0)"))


MISTAKES: tuple[tuple[str, Maker], ...] = (
    ("helper_column", helper_column),
    ("constant_column", constant_column),
    ("duplicate_rows", duplicate_rows),
    ("empty_result", empty_result),
    ("all_null_column", all_null_column),
    ("literal_answer", literal_answer),
    ("text_numbers", text_numbers),
    ("early_rounding", early_rounding),
)


def mistake_for(answer: RightAnswer, start: int) -> tuple[str, str] | None:
    """The first mistake that applies, trying MISTAKES from index `start` round the list."""
    for offset in range(len(MISTAKES)):
        name, maker = MISTAKES[(start + offset) % len(MISTAKES)]
        code = maker(answer)
        if code is not None:
            return name, code
    return None


def _wrap(answer: RightAnswer, index: int, template: str) -> str:
    parts = [quote_ident(c) if k != index else f"{template.format(c=quote_ident(c))} AS {quote_ident(c)}"
             for k, c in enumerate(answer.columns)]
    return f"SELECT {', '.join(parts)} FROM ({answer.sql}) AS answer"


def _parse(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read="duckdb")
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        return None


def _first_string_filter(sql: str) -> str | None:
    tree = _parse(sql)
    if tree is None:
        return None
    for eq in tree.find_all(exp.EQ):
        if isinstance(eq.expression, exp.Literal) and eq.expression.is_string and eq.find_ancestor(exp.Where):
            return eq.expression.name
    return None
