"""Checks that ask the data a question: why a result is empty, whether LIMIT cut a tie, whether
typed-in text occurs anywhere. Each runs only when its trigger holds, so an ordinary answer costs
no query at all.
"""

from __future__ import annotations

from sqlglot import exp

from datasolver.clip import clip
from datasolver.data import DataError
from datasolver.data.names import quote_ident, quote_literal
from datasolver.solver.answer_checks.model import AnswerContext, CheckFinding

MAX_CONJUNCTS = 8  # filters re-run without, for an empty result
NEAREST_VALUES = 3
TIE_WINDOW = 100  # rows fetched past LIMIT k to count a tie
MAX_CELLS_LOOKED_UP = 200


# What both diagnoses of a filter that matched nothing advise.
_FIX_THE_FILTER = (" The filter whose removal brings rows back is the one to fix: match the data's exact "
                   "spelling, case and format.")


def empty_result(ctx: AnswerContext) -> list[CheckFinding]:
    if ctx.rows:
        if ctx.every_cell_null():
            return _null_answer(ctx)
        return _null_answer(ctx, zero_count=True) if _zero_count(ctx) else []
    head = "no rows."
    parsed = ctx.parsed
    if ctx.catalog is None or parsed is None:
        return [CheckFinding("empty_result", head + " Re-check the filter values against the real distinct "
                             "values and the join keys before answering with an empty result.")]
    parts = []
    for where, part in parsed.where_conjuncts()[:MAX_CONJUNCTS]:
        count = _count(ctx, parsed.without(where, part))
        if count is None:
            continue
        parts.append("without " + _without_line(ctx, part, count))
    if parts:
        detail = " Re-run without each filter: " + "; ".join(parts) + "."
        advice = _FIX_THE_FILTER + " If none does, check the join keys."
    else:
        detail = " The query has no WHERE filter to test."
        advice = " Check the join keys (a look-alike key matches nothing) and the table."
    return [CheckFinding("empty_result", head + detail + advice)]


def _zero_count(ctx: AnswerContext) -> bool:
    """One row of counts that are all 0 (or NULL), from a query that counts: a count over a filter
    that may have matched nothing (a misspelt value gives 0, not an empty result)."""
    if ctx.n_rows != 1 or ctx.parsed is None or ctx.parsed.top is None:
        return False
    if not any(True for _ in ctx.parsed.top.find_all(exp.Count)):
        return False
    cells = [cell.strip() for cell in ctx.rows[0]]
    return bool(cells) and all(cell in ("0", "0.0", "") for cell in cells) and any(c.startswith("0") for c in cells)


def _null_answer(ctx: AnswerContext, zero_count: bool = False) -> list[CheckFinding]:
    """Rows whose every cell is NULL: an aggregate or a scalar subquery over zero matched rows (a
    misspelt filter value) answers NULL instead of nothing. Say which SELECT matched nothing and
    which of its filters emptied it. With `zero_count` (a count of 0): only when a filter matched
    nothing, since a true count of 0 is an answer."""
    n = ctx.n_rows
    head = (f"the answer is {n} row{'s' if n != 1 else ''} in which every cell is NULL: an aggregate or a "
            "scalar subquery over no matching rows gives NULL, not an empty result.")
    if zero_count:
        head = "the answer is a count of 0: a count over filters that match no row gives 0, not an empty result."
    parsed = ctx.parsed
    parts = []
    if ctx.catalog is not None and parsed is not None:
        by_where: dict[int, list[exp.Expression]] = {}
        wheres: dict[int, exp.Where] = {}
        for where, part in parsed.where_conjuncts():
            by_where.setdefault(id(where), []).append(part)
            wheres[id(where)] = where
        for key, where in wheres.items():
            sql = parsed.matched_rows_sql(where)
            if sql is None or _scalar(ctx, sql) != 0:
                continue
            tried = []
            for part in by_where[key][:MAX_CONJUNCTS]:
                count = _scalar(ctx, parsed.matched_rows_sql(where, part) or "")
                if count is not None:
                    tried.append(_without_line(ctx, part, count))
            select = clip(parsed.owning_select_sql(where), 200)
            parts.append(f"`{select}` matches 0 rows" + ("; without " + "; without ".join(tried) if tried else ""))
    if parts:
        detail = " " + ". ".join(parts) + "."
        advice = _FIX_THE_FILTER
    elif zero_count:
        return []
    else:
        detail = " No filter of the SQL matches zero rows."
        advice = (" Check the column the values come from (a wrong column, a join that found nothing, a "
                  "TRY_CAST that failed).")
    return [CheckFinding("empty_result", head + detail + advice)]


def _without_line(ctx: AnswerContext, part: exp.Expression, count: int) -> str:
    line = f"`{part.sql(dialect='duckdb')}`: {count} rows"
    nearest = _nearest_values(ctx, part) if count else []
    if nearest:
        line += f" (nearest existing values: {', '.join(repr(v) for v in nearest)})"
    return line


def _scalar(ctx: AnswerContext, sql: str) -> int | None:
    assert ctx.catalog is not None
    if not sql:
        return None
    try:
        result = ctx.query(sql, limit=1)
    except DataError as exc:
        ctx.notes.append(f"empty_result: {exc}")
        return None
    return int(result.rows[0][0]) if result.rows else None


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


def _count(ctx: AnswerContext, sql: str) -> int | None:
    assert ctx.catalog is not None
    try:
        result = ctx.query(f"SELECT count(*) FROM ({sql}) AS checked", limit=1)
    except DataError as exc:
        ctx.notes.append(f"empty_result: {exc}")
        return None
    return int(result.rows[0][0]) if result.rows else None


def _nearest_values(ctx: AnswerContext, part: exp.Expression) -> list[str]:
    """For `column = 'text'`: the column's existing values most like the text (Jaro-Winkler)."""
    if not isinstance(part, (exp.EQ, exp.Like, exp.ILike)):
        return []
    column, literal = part.this, part.expression
    if isinstance(column, exp.Literal):
        column, literal = literal, column
    if not isinstance(column, exp.Column) or not isinstance(literal, exp.Literal) or not literal.is_string:
        return []
    assert ctx.catalog is not None
    target = literal.name.strip("%")
    for table in _tables_of(ctx, part):
        if column.name not in {name for name, _ in _column_types(ctx, table)}:
            continue
        quoted = quote_ident(column.name)
        sql = (f"SELECT DISTINCT CAST({quoted} AS VARCHAR) AS v FROM {quote_ident(table)} WHERE {quoted} IS NOT NULL "
               f"ORDER BY jaro_winkler_similarity(lower(v), lower({quote_literal(target)})) DESC, v "
               f"LIMIT {NEAREST_VALUES}")
        try:
            return [row[0] for row in ctx.query(sql, limit=NEAREST_VALUES).rows]
        except DataError as exc:
            ctx.notes.append(f"empty_result nearest values: {exc}")
    return []


def _tables_of(ctx: AnswerContext, part: exp.Expression) -> list[str]:
    """Catalog tables named in the SELECT the conjunct belongs to."""
    assert ctx.catalog is not None
    select = part.find_ancestor(exp.Select)
    names = []
    for table in (select or part).find_all(exp.Table):
        try:
            names.append(ctx.catalog.resolve(table.name))
        except DataError:
            continue  # a CTE name
    return names


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
