"""The `unwrap_statement` rule of the before-run stage: a model wrapped its SQL in a Markdown fence,
or ended it with a semicolon and a comment, which DuckDB reads as a second, empty statement. The
statement inside is what runs. Its bound: the text it reads."""

from __future__ import annotations

import re

from datasolver.data.sql_tokens import tokenize

MAX_SQL_CHARS = 1_000_000  # of a query the rule reads (about 2 s of token walk; a longer one runs as written)
_FENCE_LINE = re.compile(r"^\s*```")


def unwrap_statement(sql: str) -> tuple[str, list[str]]:
    """The statement inside what a model wrote, and notes on what was taken away.

    A Markdown code fence (```sql … ```, with or without prose around it) is reduced to the code
    inside its first block; trailing semicolons and the comments and blank space around them are
    dropped, because DuckDB then reads the query as a second, empty statement, and a comment at
    the end would swallow the parenthesis of any query wrapped around it (counting rows). Comments
    inside the statement stay. Never fails: text with nothing to remove, or past `MAX_SQL_CHARS`, comes
    back unchanged.
    """
    if len(sql) > MAX_SQL_CHARS:
        return sql, []
    notes: list[str] = []
    lines = sql.splitlines()
    opening = next((k for k, line in enumerate(lines) if _FENCE_LINE.match(line)), None)
    if opening is not None:
        closing = next((k for k in range(opening + 1, len(lines)) if _FENCE_LINE.match(lines[k])), len(lines))
        inside = "\n".join(lines[opening + 1:closing])
        if inside.strip():
            sql = inside
            notes.append("removed the Markdown code fence around the SQL")
    tokens = tokenize(sql)
    end = len(tokens)
    while end and (tokens[end - 1].kind in ("ws", "comment") or tokens[end - 1].text == ";"):
        end -= 1
    tail = tokens[end:]
    if any(t.kind == "comment" for t in tail):
        notes.append("removed the comment after the end of the statement")
    if tail:
        sql = sql[: tokens[end - 1].end] if end else ""
    return sql.strip(), notes
