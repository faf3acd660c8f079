"""Recognise the JSON shapes users meet and turn each into one or more tables.

Shapes: {"table", "records"}; a list of objects; JSON Lines; an object whose values are lists of
objects or objects of objects (one table `<stem>_<key>` each — this covers the knowledge-graph
shape entities / attributes / relations); an object of objects keyed by id (one row per key, the
key in column `key`). Nested objects flatten to `parent_child` columns; lists become DuckDB lists
(objects inside them structs) where their elements share a type, else JSON text with a note
(`arrow_columns.list_column`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from datasolver.data.arrow_columns import TextTable, table_from_records
from datasolver.data.compressed import compression, read_all, read_head, table_stem
from datasolver.data.errors import SourceSkipped
from datasolver.data.input_limits import InputLimits, shape_refusal

HEAD_BYTES = 64 * 1024
_TABLE_KEY = re.compile(r'^\s*\{\s*"table"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"records"\s*:\s*\[')
KEY_COLUMN = "key"
# Integers longer than this stay exact as text (Python refuses to convert past 4,300 digits, and
# nothing numeric is gained beyond int64 anyway); the file still loads, with a note.
MAX_INT_DIGITS = 100
# Nested objects flatten into columns down to this depth; anything deeper stays as JSON text.
MAX_FLATTEN_DEPTH = 32


@dataclass
class JsonTable:
    """One table found in a JSON file: its source name and its rows (dicts, already flattened)."""

    source_name: str
    records: list[dict]
    note: str = ""

    def to_table(self) -> TextTable:
        """The records as one table, refused (SourceSkipped) before it is built when padding them
        to a common width would make it too large (`input_limits.shape_refusal`)."""
        refusal = records_refusal(self.records)
        if refusal:
            raise SourceSkipped(f"not loaded: {refusal}")
        return table_from_records(self.records)


def records_refusal(records: list[dict]) -> str | None:
    """Why rows with these keys may not become one table (too wide, or mostly padding), or None."""
    keys: dict[str, None] = {}
    values = 0
    for record in records:
        values += len(record)
        keys.update(dict.fromkeys(record))
    return shape_refusal(len(records), len(keys), values)


@dataclass
class JsonFile:
    tables: list[JsonTable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def peek_single_table_name(path: Path) -> str | None:
    """The one table name of a file, from its head only, when the shape makes it certain.

    `{"table": "x", "records": [` → "x"; a top-level list or JSON Lines → the file stem.
    None means the whole file must be parsed to know its tables.
    """
    head = read_head(path, HEAD_BYTES)[0].decode("utf-8-sig", errors="replace")
    match = _TABLE_KEY.match(head)
    if match:
        return json.loads(match.group(1))
    stripped = head.lstrip()
    if stripped.startswith("["):
        return table_stem(path)
    if _looks_like_json_lines(head):
        return table_stem(path)
    return None


@dataclass(frozen=True)
class HeadShape:
    """Columns and rows of a one-table file as its head shows them (before the file is loaded)."""

    columns: list[str]
    rows: int
    exact: bool  # the head held the whole table; else rows are estimated from the file size


def peek_shape(path: Path) -> HeadShape | None:
    """Columns and row count of a file `peek_single_table_name` names, from its first HEAD_BYTES.

    Records the head holds completely are parsed (and flattened as a load would); the count is
    exact when the whole table is in the head, else the file size divided by their mean length.
    None when the head holds no whole record.
    """
    raw, complete = read_head(path, HEAD_BYTES)
    if compression(path) and not complete:
        return None  # the rows of a compressed file cannot be estimated from its size
    size = len(raw) if complete else path.stat().st_size
    head = raw.decode("utf-8-sig", errors="ignore")
    decoder = json.JSONDecoder(parse_int=_Numbers().parse_int)  # long integers stay text, as on load
    match = _TABLE_KEY.match(head)
    try:
        if match or head.lstrip().startswith("["):
            start = match.end() if match else head.index("[") + 1
            records, end, closed = _records_in_list(decoder, head, start)
        elif _looks_like_json_lines(head):
            lines = head.splitlines(keepends=True)
            if not complete and lines:
                lines = lines[:-1]  # the last line may be cut
            start = 0
            records = [decoder.decode(line) for line in lines if line.strip()]
            end, closed = sum(len(line) for line in lines), complete
        else:
            return None
    except (ValueError, RecursionError):  # a bad or too deeply nested head: the load will say why
        return None
    if not records:
        return None
    columns = list(dict.fromkeys(k for r in _rows_from_list(records) for k in r))
    if closed:
        return HeadShape(columns, len(records), True)
    used = len(head[start:end].encode("utf-8"))
    before = len(head[:start].encode("utf-8"))
    return HeadShape(columns, max(len(records), round(len(records) * (size - before) / max(used, 1))), False)


def _records_in_list(decoder: json.JSONDecoder, text: str, start: int) -> tuple[list, int, bool]:
    """The whole values of a JSON list that starts at `start` (after its `[`), where the last one
    ends, and whether the list's `]` was reached."""
    records: list = []
    pos = end = start
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            return records, end, False
        if text[pos] == "]":
            return records, pos, True
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return records, end, False
        records.append(value)
        end = pos


def _looks_like_json_lines(head: str) -> bool:
    lines = [line for line in head.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(lines[0]), dict)
    except json.JSONDecodeError:
        return False


class _Numbers:
    """json.loads hook: integers too long to be numbers are kept verbatim as text, and counted."""

    def __init__(self) -> None:
        self.long_ints = 0

    def parse_int(self, text: str) -> int | str:
        if len(text.lstrip("-")) > MAX_INT_DIGITS:
            self.long_ints += 1
            return text
        return int(text)

    def notes(self) -> list[str]:
        if not self.long_ints:
            return []
        return [f"{self.long_ints} integer(s) longer than {MAX_INT_DIGITS} digits kept as text"]


def read_json_tables(path: Path, cap: int | None = None) -> JsonFile:
    """Parse the whole file and return its tables; raise SourceSkipped when it is unusable. A
    compressed file (`x.json.gz`) is decompressed first, at most `cap` bytes (default: its size
    limit per file)."""
    try:
        text = read_all(path, InputLimits().max_file_bytes if cap is None else cap).decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError:
        raise SourceSkipped("not valid UTF-8 JSON") from None
    if not text.strip():
        raise SourceSkipped("empty file")
    numbers = _Numbers()
    try:
        try:
            data = json.loads(text, parse_int=numbers.parse_int)
        except json.JSONDecodeError as exc:
            lines = _parse_json_lines(text, numbers)
            if lines is None:
                raise SourceSkipped(f"broken JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
            data = lines
        out = _tables_from_value(data, table_stem(path))
    except RecursionError as exc:
        raise SourceSkipped("JSON nested too deeply to read (arrays or objects inside each other "
                            "beyond Python's recursion limit)") from exc
    out.notes.extend(numbers.notes())
    return out


def _parse_json_lines(text: str, numbers: _Numbers) -> list | None:
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line, parse_int=numbers.parse_int))
        except json.JSONDecodeError:
            return None
    return rows if len(rows) > 1 or (rows and isinstance(rows[0], dict)) else None


def _tables_from_value(data: object, stem: str) -> JsonFile:
    out = JsonFile()
    if isinstance(data, list):
        out.tables.append(JsonTable(stem, _rows_from_list(data)))
        return out
    if not isinstance(data, dict):
        raise SourceSkipped(f"top-level JSON {type(data).__name__} is not a table")
    if isinstance(data.get("records"), list):
        name = data.get("table")
        out.tables.append(JsonTable(name if isinstance(name, str) and name else stem, _rows_from_list(data["records"])))
        return out
    if data and all(isinstance(v, dict) for v in data.values()) and not any(
        _is_object_of_objects(v) for v in data.values()
    ):
        # {id: {...}, id: {...}}: records keyed by id.
        out.tables.append(JsonTable(stem, _rows_from_keyed(data)))
        return out
    table_keys = [k for k, v in data.items() if _is_list_of_objects(v) or _is_object_of_objects(v)]
    if table_keys:
        for key in table_keys:
            value = data[key]
            rows = _rows_from_list(value) if isinstance(value, list) else _rows_from_keyed(value)
            out.tables.append(JsonTable(f"{stem}_{key}", rows))
        ignored = [k for k in data if k not in table_keys]
        if ignored:
            out.notes.append(f"keys not holding tables were not loaded: {', '.join(map(str, ignored))}")
        return out
    # A single flat object: one row.
    out.tables.append(JsonTable(stem, [_flatten(data)]))
    return out


def _is_list_of_objects(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _is_object_of_objects(value: object) -> bool:
    return isinstance(value, dict) and bool(value) and all(isinstance(v, dict) for v in value.values())


def _rows_from_list(items: list) -> list[dict]:
    rows = []
    for item in items:
        rows.append(_flatten(item) if isinstance(item, dict) else {"value": item})
    return rows


def _rows_from_keyed(mapping: dict) -> list[dict]:
    rows = []
    for key, value in mapping.items():
        flat = _flatten(value)
        column = KEY_COLUMN if KEY_COLUMN not in flat else f"{KEY_COLUMN}_"
        rows.append({column: key, **flat})
    return rows


def _flatten(obj: dict, prefix: str = "", depth: int = 1) -> dict:
    flat: dict = {}
    for key, value in obj.items():
        name = f"{prefix}_{key}" if prefix else str(key)
        if isinstance(value, dict) and value and depth < MAX_FLATTEN_DEPTH:
            flat.update(_flatten(value, name, depth + 1))
        else:
            flat[name] = value
    return flat
