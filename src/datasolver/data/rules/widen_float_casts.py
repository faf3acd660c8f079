"""The `widen_float_casts` rule of the before-run stage: a model cast to `float` or `real` as
PostgreSQL reads them (`x::float`, `CAST(x AS REAL)`), 8 bytes there and 4 in DuckDB, so a ratio
would silently lose digits although the query runs. The cast becomes DOUBLE. Its bound: the query
text it reads."""

from __future__ import annotations

from datasolver.data.sql_tokens import tokenize

MAX_SQL_CHARS = 1_000_000  # of a query the rule reads (about 2 s of token walk; a longer one runs as written)

_NARROW_FLOATS = frozenset({"float", "real", "float4"})
_CAST_CALLS = frozenset({"cast", "try_cast"})


def widen_float_casts(sql: str) -> tuple[str, list[str]]:
    """`x::float`, `x::real`, `CAST(x AS FLOAT)` (and TRY_CAST, float4) as DOUBLE, and a note;
    a name or a string that reads `float` is left alone, and a query past `MAX_SQL_CHARS`."""
    if len(sql) > MAX_SQL_CHARS:
        return sql, []
    tokens = tokenize(sql)
    sig = [k for k, t in enumerate(tokens) if t.kind not in ("ws", "comment")]
    calls: list[str] = []  # the word before each open parenthesis, innermost last
    widened: list[str] = []
    out = [t.text for t in tokens]
    for n, k in enumerate(sig):
        tok = tokens[k]
        prev = tokens[sig[n - 1]] if n else None
        if tok.text == "(":
            calls.append(prev.text.lower() if prev is not None and prev.kind == "word" else "")
        elif tok.text == ")" and calls:
            calls.pop()
        elif tok.kind == "word" and tok.text.lower() in _NARROW_FLOATS and prev is not None:
            before = tokens[sig[n - 2]] if n > 1 else None
            cast = prev.text == ":" and before is not None and before.text == ":" and before.end == prev.start
            in_cast = prev.text.lower() == "as" and bool(calls) and calls[-1] in _CAST_CALLS
            if cast or in_cast:
                out[k] = "DOUBLE"
                widened.append(tok.text)
    if not widened:
        return sql, []
    kinds = ", ".join(dict.fromkeys(w.lower() for w in widened))
    return "".join(out), [f"cast to {kinds} widened to DOUBLE (PostgreSQL's float is 8 bytes, DuckDB's 4)"]
