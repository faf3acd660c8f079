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

from collections.abc import Callable, Iterable, Iterator
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


class BeforeRun(Protocol):
    """A rule of the before-run stage: the query as given → (the query to run, notes on what changed;
    none when it does not apply). Applied to every query, before its first run."""

    __name__: str

    def __call__(self, sql: str) -> tuple[str, list[str]]: ...


class KnownColumns:
    """What an on-reject rule may read besides the query: the catalog's column names (iterating it) and
    which of them are text (`text()`), each read at most once and only when a rule asks, since a
    query DuckDB rejected may need neither and reading them may load tables."""

    def __init__(self, names: Callable[[], Iterable[str]], text: Callable[[], Iterable[str]] = lambda: ()) -> None:
        self._read_names, self._read_text = names, text
        self._names: list[str] | None = None
        self._text: list[str] | None = None

    def __iter__(self) -> Iterator[str]:
        if self._names is None:
            self._names = list(self._read_names())
        return iter(self._names)

    def text(self) -> list[str]:
        """The names of the text (VARCHAR) columns among them."""
        if self._text is None:
            self._text = list(self._read_text())
        return self._text


class OnReject(Protocol):
    """A rule of the on-reject stage: (a query DuckDB rejected, the catalog's columns) → rewrites, each
    (SQL, notes on what changed), in the order to try; the engine runs the first that executes."""

    __name__: str

    def __call__(self, sql: str, columns: KnownColumns) -> list[tuple[str, list[str]]]: ...
