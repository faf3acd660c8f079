"""Turn Python values (from JSON or SQLite) into Arrow columns without losing anything.

Uniform columns keep their type (int64, float64, bool). Text and mixed columns become text and are
marked for the same whole-column type inference as CSV, so `"001"` stays text and a column holding
`5` and `"abc"` loads as text rather than failing or dropping a value.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa



@dataclass
class TextTable:
    """An Arrow table plus the names of its text columns that still need type inference."""

    table: pa.Table
    infer: list[str]


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


def column_from_values(values: list[object]) -> tuple[pa.Array, bool]:
    """(array, needs_inference) for one column of Python values."""
    import pyarrow as pa  # only where a source is read (a query on cached tables needs no pyarrow)

    # Classify by the set of Python types (cheap), not value by value.
    kinds = {_KIND_BY_TYPE.get(t, "other") for t in set(map(type, values)) if t is not type(None)}
    if not kinds:
        return pa.array([None] * len(values), type=pa.string()), False
    if kinds == {"bool"}:
        return pa.array(values, type=pa.bool_()), False
    if kinds == {"str"}:
        return pa.array(values, type=pa.string()), True
    if kinds == {"float"}:
        return pa.array(values, type=pa.float64()), False
    if kinds == {"int"}:
        try:
            return pa.array(values, type=pa.int64()), False
        except (OverflowError, pa.ArrowInvalid):
            # Integers beyond int64 stay exact as text (a float would round them).
            return pa.array([to_text(v) for v in values], type=pa.string()), False
    if kinds == {"int", "float"} and all(v is None or isinstance(v, float) or abs(v) < 2**53 for v in values):
        return pa.array([None if v is None else float(v) for v in values], type=pa.float64()), False
    return pa.array([to_text(v) for v in values], type=pa.string()), True

_KIND_BY_TYPE = {bool: "bool", int: "int", float: "float", str: "str"}


def table_from_columns(names: list[str], columns: list[list[object]]) -> TextTable:
    import pyarrow as pa

    arrays, infer = [], []
    for name, values in zip(names, columns):
        array, needs = column_from_values(values)
        arrays.append(array)
        if needs:
            infer.append(name)
    return TextTable(pa.Table.from_arrays(arrays, names=names), infer)


def table_from_records(records: list[dict]) -> TextTable:
    """Rows as dicts (possibly with different keys) → columns in first-seen key order."""
    order: dict[str, None] = {}
    for record in records:
        for key in record:
            order.setdefault(key, None)
    names = list(order)
    columns = [[record.get(name) for record in records] for name in names]
    return table_from_columns(names, columns)
