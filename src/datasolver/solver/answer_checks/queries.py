"""Checks that ask the data a question: why a result is empty, whether LIMIT cut a tie, whether
typed-in text occurs anywhere. Each runs only when its trigger holds, so an ordinary answer costs
no query at all.
"""

from __future__ import annotations

from typing import Any


from datasolver.data import DataError
from datasolver.data.empty_result import counts_zero, explain_empty
from datasolver.data.names import quote_ident, quote_literal
from datasolver.solver.answer_checks import model
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding

TIE_WINDOW = 100  # rows fetched past LIMIT k to count a tie
MAX_CELLS_LOOKED_UP = 200


def empty_result(ctx: AnswerContext) -> list[CheckFinding]:
    """No rows, or rows of NULLs only, or a count of 0 whose filters matched nothing: which filter
    emptied it (the data room's one diagnosis; a true count of 0 is an answer)."""
    if ctx.rows and not ctx.every_cell_null():
        if not _zero_count(ctx):
            return []
        diagnosis = explain_empty(sql=ctx.final_sql, zero_count=True, **{"catalog": ctx.catalog, **_within_budget(ctx)})
        ctx.notes.extend(diagnosis.notes)
        return [CheckFinding("empty_result", diagnosis.message())] if diagnosis.empty_selects else []
    diagnosis = explain_empty(sql=ctx.final_sql, null_rows=ctx.n_rows if ctx.rows else 0,
                              **{"catalog": ctx.catalog, **_within_budget(ctx)})
    ctx.notes.extend(diagnosis.notes)
    return [CheckFinding("empty_result", diagnosis.message())]


def _within_budget(ctx: AnswerContext) -> dict[str, Any]:
    """The diagnosis's queries under the checks' own timeout and what is left of their budget (none
    left: no query runs, the diagnosis is general advice, and a note says why)."""
    left = ctx.seconds_left()
    if left <= 0:
        ctx.notes.append(f"empty_result: not run: the answer checks' {model.CHECKS_BUDGET_S:g} s were spent")
        return {"catalog": None}
    return {"timeout_s": model.QUERY_TIMEOUT_S, "budget_s": left}


def _zero_count(ctx: AnswerContext) -> bool:
    """One row of counts that are all 0 (or NULL), from a query that counts (the data room's rule)."""
    return ctx.n_rows == 1 and counts_zero(ctx.final_sql, ctx.rows)


def ties_cut(ctx: AnswerContext) -> list[CheckFinding]:
    parsed = ctx.parsed
    if ctx.catalog is None or parsed is None:
        return []
    k = parsed.top_limit()
    if k is None or k < 1 or ctx.n_rows != k:
        return []
    keyed = parsed.with_sort_keys(k + TIE_WINDOW)
    if keyed is None:
        return []
    sql, n_keys = keyed
    try:
        result = ctx.query(sql, limit=k + TIE_WINDOW)
    except DataError as exc:
        ctx.notes.append(f"ties_cut: {exc}")
        return []
    keys = [tuple(row[-n_keys:]) for row in result.rows]
    if len(keys) <= k or keys[k] != keys[k - 1]:
        return []
    cut_key = keys[k - 1]
    kept = sum(1 for key in keys[:k] if key == cut_key)
    tied = sum(1 for key in keys if key == cut_key)
    more = "+" if len(keys) == k + TIE_WINDOW and keys[-1] == cut_key else ""
    shown = ", ".join(str(v) for v in cut_key)
    return [CheckFinding("ties_cut", (
        f"`ORDER BY {parsed.order_sql()} LIMIT {k}` cuts a tie: {tied}{more} rows share the sort key "
        f"({shown}) and {kept} of them are kept. A singular question (\"which X has the highest …\") keeps "
        "one row in source order: leave it. A plural one (\"which Xs …\", \"all …\") wants every tied row: "
        "filter on the extreme value (`= (SELECT max(…) …)`) instead of LIMIT."))]


def text_cells_not_in_data(ctx: AnswerContext, limit: int = MAX_CELLS_LOOKED_UP) -> tuple[list[str], int]:
    """(text cells of the answer that occur in no text column of any table, cells looked up)."""
    if ctx.catalog is None:
        return [], 0
    cells = sorted({c.strip() for row in ctx.rows[:limit] for c in row if c.strip() and not _numeric(c)})
    if not cells:
        return [], 0
    missing = set(cells)
    values = ", ".join("(" + quote_literal(c) + ")" for c in cells)
    for table in ctx.catalog.tables():
        if not missing:
            break
        text_columns = [name for name, kind in _column_types(ctx, table.name) if "VARCHAR" in kind.upper()]
        if not text_columns:
            continue
        union = " UNION ".join(f'SELECT CAST("{c.replace(chr(34), chr(34) * 2)}" AS VARCHAR) AS v '
                               f'FROM "{table.name}"' for c in text_columns)
        sql = f"SELECT t.v FROM (VALUES {values}) AS t(v) WHERE t.v IN ({union})"
        try:
            result = ctx.query(sql, limit=len(cells))
        except DataError as exc:
            ctx.notes.append(f"literal_answer lookup in {table.name}: {exc}")
            continue
        missing -= {row[0] for row in result.rows}
    return sorted(missing), len(cells)


def _column_types(ctx: AnswerContext, table: str) -> list[tuple[str, str]]:
    assert ctx.catalog is not None
    try:
        result = ctx.query(f"SELECT * FROM {quote_ident(table)} LIMIT 0", limit=1)
    except DataError:
        return []
    return list(zip(result.columns, (str(t) for t in result.types)))


def _numeric(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True
