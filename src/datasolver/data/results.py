"""Query results, and every text form of them: the compact one tools give the model, and the formats
people read and pipes parse (`datasolver sql --format table|csv|tsv|json|markdown`, `tables --json`).

One rule for a value, wherever it is shown: as SQL writes it (`sql_text`: NULL, true/false, ISO
dates, `[a, b]`), and, where people or the model read it, unambiguous (`cell_text`: NULL bare; text
that would read as NULL, empty text and text with spaces at its ends as SQL literals, `'NULL'`,
`''`, `' x'`) with control characters made visible (`\\t`, `\\x1b`). Separators are never escaped:
a TSV's tabs stay tabs, and a tab inside a value is written `\\t`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, TextIO

from datasolver.data.load_notes import LoadNote, render_notes
from datasolver.sizes import human_size
from datasolver.terminal import printable

CUT_MARKER = "…[cut]"
NULL_TEXT = "NULL"
TSV_NULL = "\\N"  # PostgreSQL's and MySQL's text-format NULL: an empty TSV cell is the empty text
FORMATS = ("table", "csv", "tsv", "json", "markdown")
Format = Literal["table", "csv", "tsv", "json", "markdown"]
TABLE_CELL_WIDTH = 80  # a `table` cell is cut at this many terminal columns ("…")
_NUMERIC = re.compile(r"^(U?(TINY|SMALL|HUGE|BIG)?INT(EGER)?|FLOAT|DOUBLE|REAL|DECIMAL.*|NUMERIC.*)$", re.IGNORECASE)
# What `printable` escapes beyond JSON's own escapes: DEL, C1 controls and bidirectional controls.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile("\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def escape_breaks(text: object) -> str:
    """`text` with every line break written as a visible escape (`\\n`, `\\u2028`): a name, a file
    name or a cell stays on its own line of a prompt or a listing, so a column named
    `x\\n# Question\\n…` cannot write a heading of its own."""
    value = str(text)
    if not _LINE_BREAKS.search(value):
        return value
    return _LINE_BREAKS.sub(_escape_break, value)


def _escape_break(match: re.Match[str]) -> str:
    char = match.group()
    if char in ("\n", "\r\n", "\r"):
        return "\\n" if char != "\r" else "\\r"
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


@dataclass
class TableInfo:
    """What a listing shows about one table. `rows` is None when unknown without loading;
    `types` is known once the table is loaded."""

    name: str
    kind: str
    source_file: str
    source_name: str
    rows: int | None
    columns: list[str] | None
    aliases: list[str] = field(default_factory=list)
    origin: str | None = None
    loaded: bool = False
    rows_exact: bool = True
    types: list[str] | None = None

    @property
    def rows_label(self) -> str:
        """The row count as every listing shows it: `120`, `~120` (an estimate) or `?` (unknown)."""
        if self.rows is None:
            return "?"
        return str(self.rows) if self.rows_exact else f"~{self.rows}"


@dataclass
class QueryResult:
    """The first rows of a result, the total row count and any SQL rewrites applied.

    `total_rows` is always the true count. Fewer rows than that means the result was cut
    (`truncated`): by the row limit asked for, or, when `byte_budget` is set, because the next
    row would have brought the first rows past that many bytes.
    """

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    total_rows: int
    rewrites: list[str] = field(default_factory=list)
    sql: str = ""
    byte_budget: int | None = None
    """Set when the rows stop short of the limit because of the byte budget (its size in bytes)."""
    notes: list[LoadNote] = field(default_factory=list)
    """What loading said about the tables the query read (see load_notes.py)."""

    @property
    def truncated(self) -> bool:
        """True when the result has more rows than these."""
        return self.total_rows > len(self.rows)

    def truncation_note(self) -> str:
        """'' for a whole result; ` (truncated)` for a cut one, and why when it was the byte budget."""
        if not self.truncated:
            return ""
        if self.byte_budget is not None:
            return (f" (truncated: the next row would bring the rows shown past {human_size(self.byte_budget)}; "
                    "select fewer or narrower columns, e.g. left(col, 200))")
        return " (truncated)"

    def count_line(self) -> str:
        """`rows: 3 of 3`; a cut result says so: `rows: 50 of 1200 (truncated)`."""
        return f"rows: {len(self.rows)} of {self.total_rows}{self.truncation_note()}"


# ------------------------------------------------------------------------------ one value


def sql_text(value: Any) -> str:
    """A value as SQL writes it (DuckDB's cast to VARCHAR): NULL, true/false, 12.50, ISO dates and
    times, BLOBs with `\\xHH` for bytes that are not printable ASCII, `[a, NULL]`, `{'k': v}`."""
    if value is None:
        return NULL_TEXT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02X}" for b in bytes(value))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_unambiguous(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(str(k))}: {_unambiguous(v)}" for k, v in value.items()) + "}"
    return str(value)


def _unambiguous(value: Any) -> str:
    """`sql_text`, but text that would be ambiguous written bare is an SQL literal (as DuckDB writes
    text inside a list: `[a, '', 'NULL']`)."""
    return _literal(value) if isinstance(value, str) and _ambiguous(value) else sql_text(value)


def _ambiguous(text: str) -> bool:
    """Text that, written bare, would read as NULL, as nothing, hide spaces, or look quoted."""
    return not text or text != text.strip() or text.upper() == NULL_TEXT or text.startswith("'")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def cell_text(value: Any, max_chars: int = 200) -> str:
    """A cell as people and the model read it: `sql_text`, with text that would be ambiguous written
    as an SQL literal (`'NULL'`, `''`, `' x'`), control characters visible, cut at `max_chars`."""
    text = printable(escape_breaks(_unambiguous(value)))
    return text if len(text) <= max_chars else text[:max_chars] + CUT_MARKER


# ------------------------------------------------------------------------------ the model's view


def render_result(result: QueryResult, max_cell_chars: int = 200) -> str:
    """`rows: R of T` first (saying when the rows were cut), then a tab-separated header and rows;
    rewrites noted at the end, then what loading said about the tables read (`note: …`)."""
    lines = [result.count_line()]
    lines.append("\t".join(printable(escape_breaks(c)) for c in result.columns))
    for row in result.rows:
        lines.append("\t".join(cell_text(v, max_cell_chars) for v in row))
    if result.rewrites:
        lines.append(rewrites_note(result.rewrites))
    lines += [printable(line) for line in render_notes(result.notes)]
    return "\n".join(lines)


def rewrites_note(rewrites: list[str]) -> str:
    """The line that says which repairs made the SQL run."""
    return "note: SQL rewritten before it ran: " + "; ".join(rewrites)


def render_describe(info: TableInfo, columns: list[tuple[str, str]], rows: list[tuple], total: int) -> str:
    head = f"table {info.name} ({total} rows) from {escape_breaks(info.source_file)}"
    if info.aliases:
        head += f"; aliases: {', '.join(escape_breaks(a) for a in info.aliases)}"
    if info.origin:
        head += f"; origin: {info.origin}"
    lines = [head, "columns:"]
    lines += [f"  {escape_breaks(name)}  {ctype}" for name, ctype in columns]
    lines.append(f"sample rows ({len(rows)}):")
    lines.append("\t".join(escape_breaks(name) for name, _ in columns))
    lines += ["\t".join(cell_text(v, 80) for v in row) for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------ formats for people and pipes


def format_result(result: QueryResult, fmt: Format, *, terminal: bool = False) -> str:
    """The result's columns and rows in one of `FORMATS`, ending with a newline.

    table: aligned columns (numbers to the right), cells as `cell_text` cut at TABLE_CELL_WIDTH
    terminal columns, then the `count_line`. tsv: tab-separated, NULL as `\\N`, and a backslash,
    tab, newline or other control character inside a value escaped (`\\\\`, `\\t`, `\\n`, `\\x1b`),
    so every line is one row and every tab a separator. csv: RFC 4180, NULL as an empty field and
    the empty text as `""` (see `write_csv` for one column); with `terminal`, control characters are made visible (a file or a pipe
    gets the values as they are). json: one object with `columns` (name, type), `rows` (arrays),
    `row_count` (the true count), `truncated`, `rewrites` and the load `notes` (path, table, kind,
    reason). markdown: a pipe table. Every other format leaves the notes to its caller (stderr).
    """
    if fmt == "table":
        return _table(result)
    if fmt == "tsv":
        out = io.StringIO()
        write_tsv(out, result.columns, result.rows)
        return out.getvalue()
    if fmt == "csv":
        out = io.StringIO()
        write_csv(out, result.columns, result.rows, visible_controls=terminal)
        return out.getvalue()
    if fmt == "json":
        return json_text({
            "columns": [{"name": c, "type": t} for c, t in zip(result.columns, result.types)],
            "rows": [[json_value(v) for v in row] for row in result.rows],
            "row_count": result.total_rows,
            "truncated": result.truncated,
            "rewrites": list(result.rewrites),
            "notes": [{"path": n.path, "table": n.table, "kind": n.kind, "reason": n.reason} for n in result.notes],
        }) + "\n"
    if fmt == "markdown":
        return _markdown(result)
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def write_csv(stream: TextIO, columns: list[str], rows: Iterable[tuple[Any, ...]], *,
              visible_controls: bool = False) -> int:
    """Write a header and `rows` as CSV (`format_result`'s csv) to `stream`; the number of rows.

    NULL is an empty field, except in a one-column file: there an empty line would be a row of no
    fields to a strict reader (the official scorer's), so NULL is `""` like the empty text."""
    null = '""' if len(columns) == 1 else ""
    stream.write(",".join(_csv_field(c, visible_controls) for c in columns) + "\n")
    count = 0
    for row in rows:
        stream.write(",".join(null if v is None else _csv_field(sql_text(v), visible_controls) for v in row) + "\n")
        count += 1
    return count


def write_tsv(stream: TextIO, columns: list[str], rows: Iterable[tuple[Any, ...]]) -> int:
    """Write a header and `rows` as TSV (`format_result`'s tsv) to `stream`; the number of rows."""
    stream.write("\t".join(_tsv_escape(c) for c in columns) + "\n")
    count = 0
    for row in rows:
        stream.write("\t".join(TSV_NULL if v is None else _tsv_escape(sql_text(v)) for v in row) + "\n")
        count += 1
    return count


def _csv_field(text: str, visible_controls: bool) -> str:
    if visible_controls:
        text = printable(text, keep_newlines=True)
    if text == "" or any(c in text for c in ',"\n\r') or text != text.strip():
        return '"' + text.replace('"', '""') + '"'
    return text


def _tsv_escape(text: str) -> str:
    return printable(text.replace("\\", "\\\\"))


def json_value(value: Any) -> Any:
    """A value as JSON holds it: numbers, true/false, null, arrays and objects as themselves; a
    non-finite float, a date, a BLOB or anything else as its `sql_text`."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else sql_text(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else sql_text(value)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    return sql_text(value)


def json_text(record: Any) -> str:
    """`record` as JSON text whose every control character is an escape (`\\u001b`, `\\u202e`),
    so it is safe on a terminal and parses back to the same values."""
    text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _width(text: str) -> int:
    """Terminal columns `text` takes (CJK and full-width characters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 0 if unicodedata.combining(c) else 1
               for c in text)


def _fit(text: str, width: int) -> str:
    if _width(text) <= width:
        return text
    out, used = [], 0
    for char in text:
        w = _width(char)
        if used + w > width - 1:
            break
        out.append(char)
        used += w
    return "".join(out) + "…"


def _table(result: QueryResult) -> str:
    header = [printable(c) for c in result.columns]
    body = [[_fit(cell_text(v, TABLE_CELL_WIDTH * 4), TABLE_CELL_WIDTH) for v in row] for row in result.rows]
    widths = [max([_width(h)] + [_width(row[i]) for row in body]) for i, h in enumerate(header)]
    right = [bool(_NUMERIC.match(t)) for t in result.types] + [False] * len(header)

    def line(cells: list[str]) -> str:
        padded = [(" " * (w - _width(c)) + c) if r else (c + " " * (w - _width(c)))
                  for c, w, r in zip(cells, widths, right)]
        return "  ".join(padded).rstrip()

    lines = [line(header), "  ".join("-" * w for w in widths)] if header else []
    lines += [line(row) for row in body]
    lines.append(result.count_line())
    return "\n".join(lines) + "\n"


def _markdown(result: QueryResult) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(printable(c)) for c in result.columns) + " |",
             "|" + "|".join("---:" if _NUMERIC.match(t) else "---" for t in result.types) + "|"]
    lines += ["| " + " | ".join(cell(cell_text(v, 1 << 30)) for v in row) + " |" for row in result.rows]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ a listing as JSON


def listing_json(tables: list[TableInfo], unreadable: list[tuple[str, str]], notes: list[tuple[str, str]]) -> str:
    """`datasolver tables --json`: every table with its columns (and their types once loaded), then
    the files that could not be read and the load notes, each with its path and reason."""
    return json_text({
        "tables": [{
            "name": t.name, "kind": t.kind, "source_file": t.source_file, "source_name": t.source_name,
            "rows": t.rows, "rows_exact": t.rows_exact, "loaded": t.loaded,
            "columns": None if t.columns is None else [
                {"name": c, "type": t.types[i] if t.types is not None and i < len(t.types) else None}
                for i, c in enumerate(t.columns)],
            "aliases": list(t.aliases), "origin": t.origin,
        } for t in tables],
        "unreadable": [{"path": p, "reason": r} for p, r in unreadable],
        "notes": [{"path": p, "reason": r} for p, r in notes],
    }) + "\n"
