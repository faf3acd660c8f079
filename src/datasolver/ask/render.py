"""Results as text: metadata for the model, a bounded table for `render`, and answer text for {DATA}."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from datasolver.ask.handles import Handle
from datasolver.data import QueryResult
from datasolver.data.results import cell_text

FLOAT_DIGITS = 4  # answer text: 1/3 → 0.3333; round in SQL when the question asks for fewer
_ROW_FIELD = re.compile(r"\{([^{}]+)\}")


def describe_handle(handle: Handle) -> str:
    """What a data tool returns: the reference, how it was made, its shape and a few rows."""
    lines = [
        f"result {handle.ref}  ({handle.operation})",
        f"rows: {handle.rows}",
        "columns: " + ", ".join(f"{c} {t}" for c, t in zip(handle.columns, handle.types)),
    ]
    if handle.sample:
        cut = f" of {handle.rows} (truncated: render shows more)" if handle.rows > len(handle.sample) else ""
        lines.append(f"first {len(handle.sample)} rows{cut}:")
        lines.append("\t".join(handle.columns))
        lines += ["\t".join(cell_text(v, 80) for v in row) for row in handle.sample]
    else:
        lines.append("(no rows: check the conditions, spelling and case of the values)")
    lines += [f"note: {note}" for note in handle.notes]
    return "\n".join(lines)


def render_table(handle: Handle, result: QueryResult, answer_rows: int) -> str:
    """`render` output: a tab-separated table, and what to do when rows were left out."""
    lines = [f"result {handle.ref}: showing {len(result.rows)} of {result.total_rows} rows{result.truncation_note()}",
             "\t".join(result.columns)]
    lines += ["\t".join(cell_text(v, 200) for v in row) for row in result.rows]
    if result.total_rows > len(result.rows) or result.total_rows > answer_rows:
        lines.append(
            f"note: {result.total_rows} rows is more than an answer should spell out ({answer_rows}). To answer "
            f"with all of them, call final_answer with a template containing {{DATA}} and data=\"{handle.ref}\"; "
            "the program inserts every row."
        )
    return "\n".join(lines)


def format_value(value: Any) -> str:
    """A cell as answer text: integers plain, floats to 4 places without trailing zeros, dates ISO."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer():
            return str(int(value))
        return f"{value:.{FLOAT_DIGITS}f}".rstrip("0").rstrip(".")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()
    return str(value)


def row_format_fields(row_format: str) -> list[str]:
    """The column names a row format uses (`{region}: {total} t` → region, total)."""
    return _ROW_FIELD.findall(row_format)


def answer_data(result: QueryResult, row_format: str | None = None) -> str:
    """Every row as answer text, rows separated by ", ".

    Without a row format a row is its cells joined by a space; `row_format` writes each row with
    `{column}` fields (column names must exist; checked by the caller).
    """
    index = {name: i for i, name in enumerate(result.columns)}
    parts = []
    for row in result.rows:
        if row_format:
            parts.append(_ROW_FIELD.sub(lambda m: format_value(row[index[m.group(1)]]), row_format))
        else:
            parts.append(" ".join(format_value(v) for v in row))
    return ", ".join(parts)
