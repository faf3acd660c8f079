"""Results as text: metadata for the model, a bounded table for `render`, and answer text for {DATA}."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from datasolver.ask.handles import Handle
from datasolver.clip import ELLIPSIS, clip
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
        shown = len(handle.sample)
        lines.append(f"all {shown} rows:" if shown >= handle.rows else
                     f"first {shown} of {handle.rows} rows (truncated: a sample, not the data; render {handle.ref} to read them):")
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


def answer_data(result: QueryResult, row_format: str | None = None, max_chars: int | None = None) -> str:
    """The rows of `result` as answer text, rows separated by ", ".

    Without a row format a row is its cells joined by a space; `row_format` writes each row with
    `{column}` fields (column names must exist; checked by the caller). When `result` holds only
    the first rows of a longer result (`total_rows`), or the text would pass `max_chars`, the list
    ends with how many rows were left out and where it was cut.
    """
    index = {name: i for i, name in enumerate(result.columns)}
    parts: list[str] = []
    size = 0
    cut_by_chars = False
    for row in result.rows:
        if row_format:
            part = _ROW_FIELD.sub(lambda m: format_value(row[index[m.group(1)]]), row_format)
        else:
            part = " ".join(format_value(v) for v in row)
        if max_chars is not None and size + len(part) > max_chars:
            cut_by_chars = True
            if parts:
                break
            part = clip(part, max_chars)  # one row longer than the whole budget: its start
        parts.append(part)
        size += len(part) + 2
    text = ", ".join(parts)
    left = max(result.total_rows, len(result.rows)) - len(parts)
    if left > 0 or cut_by_chars:
        where = f"{max_chars:,} characters" if cut_by_chars else f"{len(parts):,} rows"
        text += f" {ELLIPSIS} and {left:,} more (the list was cut at {where})" if left else f" (cut at {where})"
    return text


def plain_row_format(columns: list[str] | tuple[str, ...]) -> str | None:
    """How the program writes a row it chose to write: one column is its value; several are the
    first, then the others in parentheses (`Los Angeles (3990456)`, `Paris (2021, 10.5)`)."""
    if len(columns) < 2 or any("{" in c or "}" in c for c in columns):
        return None
    first, *rest = columns
    return "{" + first + "} (" + ", ".join("{" + c + "}" for c in rest) + ")"
