"""Turn Python values (from JSON or SQLite) into Arrow columns without losing anything.

Uniform columns keep their type (int64, float64, bool). Text and mixed columns become text and are
marked for the same whole-column type inference as CSV, so `"001"` stays text and a column holding
`5` and `"abc"` loads as text rather than failing or dropping a value. A column of lists becomes an
Arrow list (objects inside it structs, absent keys NULL) when every element reads back as written:
`["male", "x"]` → `VARCHAR[]`, `[{"who": "ann"}]` → `STRUCT(who VARCHAR)[]`; lists of elements of
different types (`[1, "a"]`), or lists beside other values, stay JSON text with a note.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from datasolver.data.load_notes import TEXT_COLUMN

if TYPE_CHECKING:
    import pyarrow as pa



@dataclass
class TextTable:
    """An Arrow table plus the names of its text columns that still need type inference, and what
    building it had to say about its columns (`(kind, text)`, see load_notes)."""

    table: pa.Table
    infer: list[str]
    notes: list[tuple[str, str]] = field(default_factory=list)


RAGGED_LISTS = "kept as JSON text: its values (lists, their elements) do not share one type"


def to_text(value: object) -> str | None:
    """A lossless text form of one value (JSON for containers, repr-exact floats)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return "\\x" + raw.hex()
    return str(value)


def column_from_values(values: list[object]) -> tuple[pa.Array, bool, str]:
    """(array, needs_inference, why lists in it stay text or "") for one column of Python values."""
    import pyarrow as pa  # only where a source is read (a query on cached tables needs no pyarrow)

    # Classify by the set of Python types (cheap), not value by value.
    kinds = {_KIND_BY_TYPE.get(t, "other") for t in set(map(type, values)) if t is not type(None)}
    if not kinds:
        return pa.array([None] * len(values), type=pa.string()), False, ""
    if kinds == {"bool"}:
        return pa.array(values, type=pa.bool_()), False, ""
    if kinds == {"str"}:
        return pa.array(values, type=pa.string()), True, ""
    if kinds == {"float"}:
        return pa.array(values, type=pa.float64()), False, ""
    if kinds == {"int"}:
        try:
            return pa.array(values, type=pa.int64()), False, ""
        except (OverflowError, pa.ArrowInvalid):
            # Integers beyond int64 stay exact as text (a float would round them).
            return pa.array([to_text(v) for v in values], type=pa.string()), False, ""
    if kinds == {"int", "float"} and all(v is None or isinstance(v, float) or abs(v) < 2**53 for v in values):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64()), False, ""
    why = RAGGED_LISTS if "list" in kinds else ""
    if kinds == {"list"}:
        lists = list_column(values)
        if not isinstance(lists, str):
            return lists, False, ""
        why = lists
    return pa.array([to_text(v) for v in values], type=pa.string()), True, why


_KIND_BY_TYPE = {bool: "bool", int: "int", float: "float", str: "str", list: "list"}


def list_column(values: list[object]) -> pa.Array | str:
    """Lists (and None) as one Arrow list column, or why they stay text: Arrow cannot hold every
    element as written (elements of different types, integers past int64, a float that would round
    an integer), or lists and objects nest deeper than MAX_NESTING. Elements no value types (only
    empty lists, only nulls) are text: `[]` → `VARCHAR[]`."""
    import pyarrow as pa

    if not _nesting_within(values, MAX_NESTING):
        return TOO_DEEP
    try:
        array = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return RAGGED_LISTS
    typed = _null_as_text(array.type)
    if typed != array.type:
        array = array.cast(typed)
    return array if all(_same(v, back) for v, back in zip(values, array.to_pylist())) else RAGGED_LISTS


MAX_NESTING = 32  # lists and objects inside each other, as deep as JSON objects flatten (json_source)
TOO_DEEP = f"kept as JSON text: lists and objects nested more than {MAX_NESTING} deep"


def _nesting_within(values: list[object], limit: int) -> bool:
    """Whether no value nests lists and objects more than `limit` deep (no recursion: a file may
    nest them as deep as the JSON parser allows)."""
    stack = [(v, 1) for v in values if isinstance(v, (list, dict))]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return False
        inner = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in inner if isinstance(v, (list, dict)))
    return True


def _null_as_text(kind: pa.DataType) -> pa.DataType:
    """The type with every part Arrow left untyped (null) made text."""
    import pyarrow as pa

    if pa.types.is_null(kind):
        return pa.string()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(_null_as_text(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _null_as_text(f.type)) for f in kind])
    return kind


def _same(written: object, back: object) -> bool:
    """Whether a value read back from Arrow is the one written (a key absent from an object and
    NULL in its struct count as the same; 1 and 1.0 too)."""
    if isinstance(written, dict):
        return isinstance(back, dict) and all(_same(written.get(k), v) for k, v in back.items()) and \
            all(k in back for k in written)
    if isinstance(written, list):
        return isinstance(back, list) and len(back) == len(written) and all(map(_same, written, back))
    if isinstance(written, float) and isinstance(back, float) and math.isnan(written):
        return math.isnan(back)
    # True == 1 in Python, but a boolean read back as an integer (or back) is not the value written.
    return written == back and isinstance(written, bool) == isinstance(back, bool)


def table_from_columns(names: list[str], columns: list[list[object]]) -> TextTable:
    import pyarrow as pa

    arrays, infer, notes = [], [], []
    for name, values in zip(names, columns):
        array, needs, why = column_from_values(values)
        arrays.append(array)
        if needs:
            infer.append(name)
        if why:
            notes.append((TEXT_COLUMN, f"column {name!r} {why}"))
    return TextTable(pa.Table.from_arrays(arrays, names=names), infer, notes)


def table_from_records(records: list[dict]) -> TextTable:
    """Rows as dicts (possibly with different keys) → columns in first-seen key order."""
    order: dict[str, None] = {}
    for record in records:
        for key in record:
            order.setdefault(key, None)
    names = list(order)
    columns = [[record.get(name) for record in records] for name in names]
    return table_from_columns(names, columns)
