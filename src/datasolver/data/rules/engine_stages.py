"""The stages the engine applies itself, one tuple of named rules each (the shape: `protocol.py`).

`HINTS`: the text the engine adds to a failed query's error (`data/query_errors.query_error`), so the
engine's own message carries them to every caller, solver.py in the sandbox included, which imports
only `datasolver.data`. The stages that read the task are in `stages.py`; none of them is imported
here, since the catalog imports this module.
"""

from __future__ import annotations

from datasolver.data.duck_errors import DuckError
from datasolver.data.rules.column_home import column_home
from datasolver.data.rules.column_piece import column_piece
from datasolver.data.rules.protocol import HintRule, Schema
from datasolver.data.rules.quoted_value import quoted_value

HINTS: tuple[HintRule, ...] = (quoted_value, column_home, column_piece)


def error_hints(error: DuckError, sql: str, schema: Schema) -> str:
    """The hints of `HINTS` for a failed query, in order, each starting with a space ("" when none)."""
    return "".join(hint(error, sql, schema) for hint in HINTS)
