"""The shape of the stages that read the task: a rule is a named function of one stage; what it
proposes carries its name.

A stage is a tuple of rules applied in order (`data/rules/stages.py`), as sqlglot's optimizer is a tuple
of passes behind one function type. A rule returns (SQL, reason) pairs; the stage's apply function
stamps each with the rule's name (its function's `__name__`), so a transcript says which rule
changed what. Each rule module states its input bound as a named constant and holds to it.

These stages (on an error, on an empty result, on a result with rows) read the task's catalog through
a `RuleContext`; the stages the engine applies itself read only the query, its error and the schema
(`protocol.py`), since the catalog imports them and nothing they import may lead back to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from datasolver.data.duck_errors import DuckError
from datasolver.data.empty_result import EmptyDiagnosis
from datasolver.data.linking import QuestionLinks
from datasolver.data.question_shape import QuestionShape

if TYPE_CHECKING:
    from datasolver.data.catalog import Catalog


@dataclass(frozen=True)
class Rewrite:
    """A query the program wrote in place of one that failed or found nothing: only a candidate,
    kept by whoever runs it when it answers and passes its checks."""

    sql: str
    reason: str  # what was rewritten, for the model and the transcript
    rule: str  # the name of the rule that wrote it


@dataclass(frozen=True)
class RuleContext:
    """What a rule may read besides the query: the task's catalog, the question's links, for a query
    that found nothing, why (`data.empty_result.explain_empty`), and what the question asks for, read
    once (`data.question_shape.QuestionShape`)."""

    catalog: Catalog
    links: QuestionLinks | None = None
    diagnosis: EmptyDiagnosis | None = None
    shape: QuestionShape | None = None


@dataclass(frozen=True)
class ResultShape:
    """What a query that ran with rows returned, as the on-rows stage sees it: its columns and rows."""

    columns: tuple[str, ...]
    rows: int


class OnError(Protocol):
    """A rule of the on-error stage: (query, its parsed error, context) → (SQL, reason) rewrites."""

    __name__: str

    def __call__(self, sql: str, error: DuckError, context: RuleContext) -> list[tuple[str, str]]: ...


class OnEmpty(Protocol):
    """A rule of the on-empty stage: (query that found nothing, context) → (SQL, reason) rewrites."""

    __name__: str

    def __call__(self, sql: str, context: RuleContext) -> list[tuple[str, str]]: ...


class OnRows(Protocol):
    """A rule of the on-rows stage: (query that ran with rows, its result's shape, context) → (SQL, reason)
    rewrites: what the question asks that the query, which passed, does not answer."""

    __name__: str

    def __call__(self, sql: str, result: ResultShape, context: RuleContext) -> list[tuple[str, str]]: ...
