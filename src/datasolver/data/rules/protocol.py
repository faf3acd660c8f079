"""The shape of the stages the engine applies itself: rules that read only the query, its error and
the schema, never the task's catalog as a whole.

The catalog imports these stages (`engine_stages.py`): its query error carries the hints to every
caller, solver.py in the sandbox included, and its execution boundary repairs what DuckDB rejects.
So nothing here, nor in their rules' modules, may import what leads back to the catalog: the rules
that read the task take a `RuleContext` (`context.py`) and sit in the stages the callers apply
(`stages.py`). As there, a rule is a named function of its stage, its name the function's `__name__`,
and each rule module states its input bound as a named constant and holds to it.
"""

from __future__ import annotations

from typing import Protocol

from datasolver.data.duck_errors import DuckError


class Schema(Protocol):
    """What a hint reads of a `datasolver.data.Catalog`: names and the columns known without loading."""

    def names(self) -> list[str]: ...
    def column_names(self, name: str, *, load: bool = True, timeout_s: float | None = None) -> list[str] | None: ...


class HintRule(Protocol):
    """A rule of the hints stage: (parsed error, query, schema) → text added to the error ("" when none),
    starting with a space."""

    __name__: str

    def __call__(self, error: DuckError, sql: str, schema: Schema) -> str: ...
